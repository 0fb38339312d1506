// Loading a run from disk: run.json, then the commit chain from 1 with no gaps. The chain stops at
// the first commit that is missing, unreadable, fails its checksum or schema, or does not fit the
// run; that file and every later one move to quarantine (list tails chain, so nothing after a bad
// commit can be trusted), and the run falls back to the checkpoint before it. The run's tail witness
// (witness.ts) says how far the log had reached: a chain shorter than it lost acknowledged commits.
import path from 'node:path';
import { DurableJsonFile } from './durableFile';
import type { LoadResult, LoadSink, Notice } from '../core/engine';
import { AgentCheckpointCorruptionError, SchemaVersionError } from '../api/errors';
import { isMissing, type FsLayer } from './fsLayer';
import { advance, byFirst, decodeOps, newCodec, parseLogNames, peekLost, type Codec, type CodecDelta, type LogFile } from './log';
import type { Quarantined } from './quarantine';
import { RunMeta } from '../api/schema';
import { StoredCommitBody, type CommitBody, type CommitOp } from '../core/storedSchema';
import { z } from 'zod';
import { corruptionReport, type CorruptionReport } from '../api/types';
import type { LostCall, RunState } from '../api/schema';
import type { TailWitness } from '../core/storedSchema';
import { readWitness, WITNESS_FILE } from './witness';

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
  /** Written by a store that keeps a tail witness: a run with such commits and no witness lost it. */
  witnessed?: true;
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
    const meta = await new DurableJsonFile(ctx.fsl, path.join(ctx.root, file), 'run', RunMeta, runId).read();
    // A valid file of another run (copied over this one's) must not become this run's identity.
    if (meta && meta.run_id !== runId) return { meta: null, bad: { file, reason: `${file} is corrupt: it holds the meta of run ${meta.run_id}` } };
    return { meta, bad: null };
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
  const notices: Notice[] = [];
  const { meta: stored, bad: metaBad } = await readMeta(ctx, runId);
  let meta = stored;
  if (!meta) {
    const first = at.get(1)?.[0];
    const body = first ? await read(first) : undefined;
    const parsed = body && !(body instanceof Error) ? RunMeta.safeParse(body.meta) : undefined;
    meta = parsed?.success && parsed.data.run_id === runId ? parsed.data : null;
    if (!meta && !metaBad) return undefined; // created but never written: not a run yet
    const file = metaBad?.file ?? rel(runId, 'run.json');
    const reason = metaBad?.reason ?? `${file} is missing`;
    const q = opts.repair && metaBad ? await ctx.quarantine(file, reason, runId) : null;
    if (meta && opts.repair) await new DurableJsonFile(ctx.fsl, path.join(ctx.root, file), 'run', RunMeta, runId, ctx.retryDelaysMs).write(meta);
    const rebuilt = meta ? (opts.repair ? 'rebuilt from the first commit' : 'readable from the first commit') : 'and no commit holds the run meta';
    reports.push(corruptionReport({ run_id: runId, file, reason, quarantined: q ? [q] : [], lost: `nothing: run.json ${rebuilt}` }));
    if (!meta) throw new AgentCheckpointCorruptionError(`Run ${runId} cannot be opened: ${reason}, and no commit holds its meta.`, runId, file);
  }
  sink.meta(meta);
  const codec = newCodec();
  const bad: Bad[] = [];
  const used = new Set<string>();
  const survived = new Survived();
  let p = 1;
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
        survived.add(d.body.ops);
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
  const wit = await witnessOf(ctx, runId, [...cache.values()], opts.repair, reports, notices);
  const expect = Math.max(opts.expectCommits, wit?.commits ?? 0);
  const stopBad = bad.find((b) => b.file === rel(runId, 'log', at.get(p)?.[0]?.name ?? ''));
  const missing = !stopBad && (after.length > 0 || expect >= p) ? `${rel(runId, 'log', `${String(p).padStart(12, '0')}.json`)}` : null;
  for (const r of reports) r.fell_back_to_seq = survived.seq > 0 ? survived.seq : null;
  if (bad.length > 0 || missing) {
    const onDisk = Math.max(0, ...files.map((f) => f.last));
    reports.push(await chainReport(ctx, runId, { bad, after, missing, stopBad, survived, witness: wit, onDisk, repair: opts.repair }));
  }
  return { result: { report: mergeReports(reports), commits: p - 1, witness: wit, notices }, next: p, codec, meta, covered };
}

/** What the surviving chain holds: the witness counts the same way, so the two compare. */
class Survived {
  seq = 0;
  step = 0;
  private readonly effects = new Map<string, boolean>();

  add(ops: readonly CommitOp[]): void {
    for (const op of ops) {
      if (op.op === 'record') {
        this.seq = op.record.seq;
        this.step = op.record.step;
      } else if (op.op === 'effect') this.effects.set(op.effect.tool_call_id, op.effect.result !== null);
    }
  }

  get intents(): number {
    return this.effects.size;
  }

  get results(): number {
    return [...this.effects.values()].filter(Boolean).length;
  }
}

/** The witness, when readable. A bad one is reported (nothing lost: it is rebuilt); a missing one that commits say existed is noted. */
async function witnessOf(ctx: LoadCtx, runId: string, read: (RawCommit | Error)[], repair: boolean, reports: CorruptionReport[], notices: Notice[]): Promise<TailWitness | null> {
  const w = await readWitness(ctx.fsl, path.join(ctx.root, 'runs', runId));
  const file = rel(runId, WITNESS_FILE);
  if (w.kind === 'ok') {
    if (w.damaged) {
      const reason = `${file} is corrupt: ${w.damaged}`;
      const q = repair ? await ctx.quarantine(file, reason, runId) : null;
      reports.push(corruptionReport({ run_id: runId, file, reason, quarantined: q ? [q] : [], lost: 'nothing: its intact slot was used, and it is rewritten' }));
    }
    return w.witness;
  }
  if (w.kind === 'bad') {
    const reason = `${file} is corrupt: ${w.reason}`;
    const q = repair ? await ctx.quarantine(file, reason, runId) : null;
    reports.push(corruptionReport({ run_id: runId, file, reason, quarantined: q ? [q] : [], lost: 'nothing: the tail witness is rebuilt from the log (a lost tail of the log cannot be seen this once)' }));
  } else if (read.some((c) => !(c instanceof Error) && c.witnessed)) {
    notices.push({ file, message: `${file} is missing: rebuilt from the log (a lost tail of the log cannot be seen this once)` });
  }
  return null;
}

interface ChainState {
  bad: Bad[];
  after: LogFile[];
  missing: string | null;
  stopBad: Bad | undefined;
  survived: Survived;
  witness: TailWitness | null;
  /** The highest commit number any file on disk claims. */
  onDisk: number;
  repair: boolean;
}

async function chainReport(ctx: LoadCtx, runId: string, s: ChainState): Promise<CorruptionReport> {
  const lostFiles = [...(s.stopBad ? [s.stopBad.file] : []), ...s.after.map((f) => rel(runId, 'log', f.name))];
  const peeked = await peekFiles(ctx, runId, lostFiles);
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
  const reason = s.stopBad?.reason ?? (s.missing ? `${s.missing} is missing${s.witness && s.witness.commits >= s.survived.seq ? ` (the run's witness says ${s.witness.commits} commits were written)` : ''}` : s.bad[0]!.reason);
  const dataLost = !!s.stopBad || !!s.missing;
  if (!dataLost) return corruptionReport({ run_id: runId, file, reason, quarantined, fell_back_to_seq: s.survived.seq || null, lost: 'nothing: an intact copy of the same commits was used' });
  const effects = effectsLost(s, peeked);
  const from = s.survived.seq + 1;
  const to = Math.max(0, s.witness?.seq ?? 0, ...peeked.seqs);
  const what = `${to >= from ? `checkpoints ${from}–${to}` : `the checkpoints after seq ${s.survived.seq}`}${effects ? ' and effect records' : effects === null ? ' (and possibly effect records)' : ''}`;
  return corruptionReport({
    run_id: runId,
    file,
    reason,
    quarantined,
    fell_back_to_seq: s.survived.seq || null,
    lost_seqs: to >= from ? { from, to } : null,
    effects_lost: effects,
    data_lost: true,
    state_before: s.witness?.state ?? peeked.terminal,
    step_before: s.witness?.step ?? (peeked.maxStep > 0 ? peeked.maxStep : null),
    lost_calls: peeked.calls,
    lost: `${what}; the run fell back to seq ${s.survived.seq}`,
  });
}

/**
 * Whether effect records were lost. The witness counts them after every acknowledged commit, so when
 * it covers every file on disk its count is the answer; the lost files' own content can only add
 * evidence that some were (it may be another run's, or unreadable): false needs proof, null = unknown.
 */
function effectsLost(s: ChainState, peeked: Peeked): boolean | null {
  const w = s.witness;
  if (w && (w.intents > s.survived.intents || w.results > s.survived.results)) return true;
  if (peeked.effects === true) return true;
  if (w && w.commits >= s.onDisk) return false;
  return peeked.effects;
}

interface Peeked {
  seqs: number[];
  /** true: some lost file shows effect records; false: every lost file was read and shows none; null: some could not be read. */
  effects: boolean | null;
  calls: LostCall[];
  terminal: RunState | null;
  maxStep: number;
}

async function peekFiles(ctx: LoadCtx, runId: string, files: string[]): Promise<Peeked> {
  const out: Peeked = { seqs: [], effects: files.length > 0 ? false : null, calls: [], terminal: null, maxStep: 0 };
  for (const file of files) {
    const text = await ctx.fsl.readFile(path.join(ctx.root, file)).then(String, () => '');
    const seen = peekLost(text, runId);
    if (!seen) {
      if (out.effects === false) out.effects = null;
      continue;
    }
    out.seqs.push(...seen.seqs);
    out.calls.push(...seen.calls);
    out.terminal ??= seen.terminal;
    out.maxStep = Math.max(out.maxStep, seen.maxStep);
    if (seen.effects) out.effects = true;
  }
  return out;
}

/** One report per load: the chain's (if any) leads; a run.json or witness problem is folded in. */
function mergeReports(rs: CorruptionReport[]): CorruptionReport | null {
  if (rs.length === 0) return null;
  const main = rs.find((r) => r.data_lost) ?? rs[rs.length - 1]!;
  if (rs.length === 1) return main;
  return { ...main, quarantined: rs.flatMap((r) => r.quarantined), lost: rs.map((r) => `${r.file}: ${r.lost}`).join('; ') };
}
