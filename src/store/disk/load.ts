// Loading a run from disk: run.json, then the commit chain from 1 with no gaps. The chain stops at
// the first commit that is missing, unreadable, fails its checksum or schema, or does not fit the
// run; that file and every later one move to quarantine (list tails chain, so nothing after a bad
// commit can be trusted), and the run falls back to the checkpoint before it.
import path from 'node:path';
import { DurableJsonFile } from './durableFile';
import type { LoadResult, LoadSink } from '../core/engine';
import { AgentCheckpointCorruptionError, SchemaVersionError } from '../api/errors';
import { isMissing, type FsLayer } from './fsLayer';
import { advance, byFirst, decodeOps, newCodec, parseLogNames, peekLost, type Codec, type CodecDelta, type LogFile } from './log';
import type { Quarantined } from './quarantine';
import { RunMeta } from '../api/schema';
import { StoredCommitBody, type CommitBody } from '../core/storedSchema';
import { z } from 'zod';
import type { CorruptionReport } from '../api/types';

export interface LoadCtx {
  fsl: FsLayer;
  root: string;
  retryDelaysMs?: readonly number[];
  quarantine(rel: string, reason: string, runId: string): Promise<Quarantined | null>;
}

export interface LoadedFiles {
  result: LoadResult;
  /** Next commit number to write. */
  next: number;
  /** The codec state after the last commit (the next commit is encoded against it). */
  codec: Codec;
  meta: RunMeta;
  /** Commits covered by the compacted file the chain starts with (0: none). */
  covered: number;
}

interface Bad {
  file: string;
  reason: string;
}

const rel = (runId: string, ...parts: string[]) => path.posix.join('runs', runId, ...parts);

/** A commit file as written: verified envelope, not yet decoded (fileLog.decodeOps). */
export interface RawCommit {
  run_id: string;
  first: number;
  last: number;
  meta?: RunMeta;
  ops: unknown[];
}
/**
 * Only the shape needed to decode; the decoded body is then validated in full (StoredCommitBody).
 * z.custom checks without copying: a crash leaves thousands of small commits, and a second full
 * parse of each was a measurable part of resuming.
 */
export const RawCommit = z.custom<RawCommit>((v) => {
  const b = v as Partial<RawCommit> | null;
  return typeof b === 'object' && b !== null && typeof b.run_id === 'string' && Number.isInteger(b.first) && Number.isInteger(b.last) && Array.isArray(b.ops);
}, 'not a commit body');

export async function readCommit(ctx: LoadCtx, runId: string, f: LogFile): Promise<RawCommit> {
  const file = rel(runId, 'log', f.name);
  const body = await new DurableJsonFile(ctx.fsl, path.join(ctx.root, file), 'commit', RawCommit, runId).read();
  if (!body) throw new AgentCheckpointCorruptionError(`${file} vanished while it was read`, runId, file);
  if (body.first !== f.first || body.last !== f.last || body.run_id !== runId) {
    throw new AgentCheckpointCorruptionError(`${file} is corrupt: it holds commits ${body.first}-${body.last} of run ${body.run_id}`, runId, file);
  }
  return body;
}

/** Decodes a raw commit (in place) against the log before it and validates it. Returns the body and the codec after it. */
export function decodeCommit(raw: RawCommit, codec: Codec, meta: RunMeta, file: string, runId: string): { body: CommitBody; delta: CodecDelta } {
  const next = decodeOps(raw.ops, codec, meta);
  const r = StoredCommitBody.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new AgentCheckpointCorruptionError(`${file} is corrupt: does not match its schema (${i?.path.join('.') || '(root)'}: ${i?.message ?? 'invalid'})`, runId, file);
  }
  return { body: r.data, delta: next };
}

async function readMeta(ctx: LoadCtx, runId: string): Promise<{ meta: RunMeta | null; bad: Bad | null }> {
  const file = rel(runId, 'run.json');
  try {
    return { meta: await new DurableJsonFile(ctx.fsl, path.join(ctx.root, file), 'run', RunMeta, runId).read(), bad: null };
  } catch (err) {
    if (err instanceof AgentCheckpointCorruptionError) return { meta: null, bad: { file, reason: err.message } };
    throw err;
  }
}

export async function loadRunFiles(ctx: LoadCtx, runId: string, sink: LoadSink, opts: { repair: boolean; expectCommits: number }): Promise<LoadedFiles | undefined> {
  const dir = path.join(ctx.root, 'runs', runId);
  let names: string[];
  try {
    names = await ctx.fsl.readdir(path.join(dir, 'log'));
  } catch (err) {
    if (!isMissing(err)) throw err;
    try {
      await ctx.fsl.stat(dir);
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
    names = [];
  }
  const files = parseLogNames(names);
  const cache = new Map<string, RawCommit | Error>();
  const at = byFirst(files);
  const read = async (f: LogFile) => {
    if (!cache.has(f.name)) cache.set(f.name, await readCommit(ctx, runId, f).catch((err: unknown) => (err instanceof SchemaVersionError ? Promise.reject(err) : (err as Error))));
    return cache.get(f.name)!;
  };
  const reports: CorruptionReport[] = [];
  const { meta: stored, bad: metaBad } = await readMeta(ctx, runId);
  let meta = stored;
  if (!meta) {
    const first = at.get(1)?.[0];
    const body = first ? await read(first) : undefined;
    const parsed = body && !(body instanceof Error) ? RunMeta.safeParse(body.meta) : undefined;
    meta = parsed?.success ? parsed.data : null;
    if (!meta && !metaBad) return undefined; // created but never written: not a run yet
    const file = metaBad?.file ?? rel(runId, 'run.json');
    const reason = metaBad?.reason ?? `${file} is missing`;
    const q = opts.repair && metaBad ? await ctx.quarantine(file, reason, runId) : null;
    if (meta && opts.repair) await new DurableJsonFile(ctx.fsl, path.join(ctx.root, file), 'run', RunMeta, runId, ctx.retryDelaysMs).write(meta);
    const rebuilt = meta ? (opts.repair ? 'rebuilt from the first commit' : 'readable from the first commit') : 'and no commit holds the run meta';
    reports.push(report(runId, file, reason, q ? [q] : [], null, null, false, `nothing: run.json ${rebuilt}`));
    if (!meta) throw new AgentCheckpointCorruptionError(`Run ${runId} cannot be opened: ${reason}, and no commit holds its meta.`, runId, file);
  }
  sink.meta(meta);
  const codec = newCodec();
  const bad: Bad[] = [];
  const used = new Set<string>();
  let p = 1;
  let lastSeq = 0;
  let covered = 0;
  for (;;) {
    const cands = at.get(p) ?? [];
    let advanced = false;
    for (const c of cands) {
      const raw = await read(c);
      try {
        if (raw instanceof Error) throw raw;
        const d = decodeCommit(raw, codec, meta, rel(runId, 'log', c.name), runId);
        sink.commit(d.body, rel(runId, 'log', c.name));
        advance(codec, d.delta);
        for (const op of d.body.ops) if (op.op === 'record') lastSeq = op.record.seq;
        used.add(c.name);
        if (c.first !== c.last) covered = c.last;
        p = c.last + 1;
        advanced = true;
        break;
      } catch (err) {
        bad.push({ file: rel(runId, 'log', c.name), reason: (err as Error).message });
      }
    }
    if (!advanced) break;
  }
  const after = files.filter((f) => !used.has(f.name) && f.last >= p && !bad.some((b) => b.file.endsWith(f.name)));
  const superseded = files.filter((f) => !used.has(f.name) && f.last < p && !bad.some((b) => b.file.endsWith(f.name)));
  if (opts.repair) for (const f of superseded) await ctx.fsl.unlink(path.join(dir, 'log', f.name)).catch(() => undefined); // an interrupted compaction's leftovers
  const stopBad = bad.find((b) => b.file === rel(runId, 'log', at.get(p)?.[0]?.name ?? ''));
  const missing = !stopBad && (after.length > 0 || opts.expectCommits >= p) ? `${rel(runId, 'log', `${String(p).padStart(12, '0')}.json`)}` : null;
  for (const r of reports) r.fell_back_to_seq = lastSeq > 0 ? lastSeq : null;
  if (bad.length > 0 || missing) {
    reports.push(await chainReport(ctx, runId, { bad, after, missing, stopBad, lastSeq, repair: opts.repair, expectCommits: opts.expectCommits, dir }));
  }
  return { result: { report: mergeReports(reports), commits: p - 1 }, next: p, codec, meta, covered };
}

async function chainReport(
  ctx: LoadCtx,
  runId: string,
  s: { bad: Bad[]; after: LogFile[]; missing: string | null; stopBad: Bad | undefined; lastSeq: number; repair: boolean; expectCommits: number; dir: string },
): Promise<CorruptionReport> {
  const lostSeqs: number[] = [];
  let effects: boolean | null = false;
  const lostFiles = [...(s.stopBad ? [s.stopBad.file] : []), ...s.after.map((f) => rel(runId, 'log', f.name))];
  for (const file of lostFiles) {
    const text = await ctx.fsl.readFile(path.join(ctx.root, file)).then(String, () => '');
    const seen = peekLost(text);
    if (!seen) effects = effects === true ? true : null;
    else {
      lostSeqs.push(...seen.seqs);
      if (seen.effects) effects = true;
    }
  }
  if (s.missing && !s.stopBad) effects = effects === true ? true : null; // a missing file's content is unknown
  const quarantined: Quarantined[] = [];
  if (s.repair) {
    for (const b of s.bad) {
      const q = await ctx.quarantine(b.file, b.reason, runId);
      if (q) quarantined.push(q);
    }
    for (const f of s.after) {
      const q = await ctx.quarantine(rel(runId, 'log', f.name), `follows ${s.stopBad?.file ?? s.missing}, where the chain broke`, runId);
      if (q) quarantined.push(q);
    }
  }
  const file = s.stopBad?.file ?? s.missing ?? s.bad[0]!.file;
  const reason = s.stopBad?.reason ?? (s.missing ? `${s.missing} is missing` : s.bad[0]!.reason);
  const dataLost = !!s.stopBad || !!s.missing;
  const from = s.lastSeq + 1;
  const to = Math.max(0, ...lostSeqs);
  const lost = !dataLost
    ? `nothing: an intact copy of the same commits was used`
    : `${to >= from ? `checkpoints ${from}–${to}` : 'the checkpoints after seq ' + s.lastSeq}${effects ? ' and effect records' : effects === null ? ' (and possibly effect records)' : ''}; the run fell back to seq ${s.lastSeq}`;
  return report(runId, file, reason, quarantined, s.lastSeq > 0 ? s.lastSeq : null, dataLost && to >= from ? { from, to } : null, dataLost ? effects : false, lost);
}

function report(
  runId: string,
  file: string,
  reason: string,
  quarantined: Quarantined[],
  fell: number | null,
  lostSeqs: { from: number; to: number } | null,
  effects: boolean | null,
  lost: string,
): CorruptionReport {
  return { run_id: runId, file, reason, quarantined, fell_back_to_seq: fell, lost_seqs: lostSeqs, effects_lost: effects, lost };
}

/** One report per load: the chain's (if any) leads; a run.json problem is folded in. */
function mergeReports(rs: CorruptionReport[]): CorruptionReport | null {
  if (rs.length === 0) return null;
  const main = rs[rs.length - 1]!;
  if (rs.length === 1) return main;
  return { ...main, quarantined: rs.flatMap((r) => r.quarantined), lost: rs.map((r) => `${r.file}: ${r.lost}`).join('; ') };
}
