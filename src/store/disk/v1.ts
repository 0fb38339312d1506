// Version-1 runs (stores written before the segment log): runs/<id>/run.json, then one file per
// commit in runs/<id>/log/ (<12-digit n>.json, or <first>-<last>.json after compaction). Read as
// before — the chain from 1 with no gaps, stopping at the first bad or missing commit, that file and
// every later one moved to quarantine — and converted to the segment format when the run is next
// acquired to be written (engine.ts). test/fixtures/store-v1/ holds a committed store of this kind.
import path from 'node:path';
import { AgentCheckpointCorruptionError, SchemaVersionError } from '../api/errors';
import { RunMeta } from '../api/schema';
import { corruptionReport, type CorruptionReport } from '../api/types';
import type { LoadOptions, LoadSink, Notice } from '../core/engine';
import { advance, newCodec, peekLost } from './codec';
import {
  decodeCommit,
  emptyPeek,
  lostTailReport,
  mergeReports,
  peekInto,
  RawCommit,
  rel,
  Survived,
  witnessFileSource,
  witnessOf,
  type LoadCtx,
  type LoadedFiles,
} from './commit';
import { DurableJsonFile } from './durableFile';
import { isMissing } from './fsLayer';
import type { Quarantined } from './quarantine';

export const pad = (n: number): string => String(n).padStart(12, '0');
export const commitName = (first: number, last: number): string =>
  first === last ? `${pad(first)}.json` : `${pad(first)}-${pad(last)}.json`;

export interface LogFile {
  name: string;
  first: number;
  last: number;
}

/** Commit files in a log folder (temp files and anything else are ignored). */
export function parseLogNames(names: readonly string[]): LogFile[] {
  const out: LogFile[] = [];
  for (const name of names) {
    const m = /^(\d{12})(?:-(\d{12}))?\.json$/.exec(name);
    if (!m) continue;
    const first = Number(m[1]);
    const last = m[2] ? Number(m[2]) : first;
    if (first >= 1 && last >= first) out.push({ name, first, last });
  }
  return out.sort((a, b) => a.first - b.first || b.last - a.last);
}

/** Candidates for each chain position: the longest range first, the single file last. */
function byFirst(files: readonly LogFile[]): Map<number, LogFile[]> {
  const m = new Map<number, LogFile[]>();
  for (const f of files)
    m.set(
      f.first,
      [...(m.get(f.first) ?? []), f].sort((a, b) => b.last - a.last),
    );
  return m;
}

interface Bad {
  file: string;
  reason: string;
}

async function readCommit(ctx: LoadCtx, runId: string, f: LogFile): Promise<RawCommit> {
  const file = rel(runId, 'log', f.name);
  const body = await new DurableJsonFile(ctx.fsl, path.join(ctx.root, file), 'commit', RawCommit, runId).read();
  if (!body) throw new AgentCheckpointCorruptionError(`${file} vanished while it was read`, runId, file);
  if (body.first !== f.first || body.last !== f.last || body.run_id !== runId) {
    throw new AgentCheckpointCorruptionError(
      `${file} is corrupt: it holds commits ${body.first}-${body.last} of run ${body.run_id}`,
      runId,
      file,
    );
  }
  return body;
}

async function readMeta(ctx: LoadCtx, runId: string): Promise<{ meta: RunMeta | null; bad: Bad | null }> {
  const file = rel(runId, 'run.json');
  try {
    const meta = await new DurableJsonFile(ctx.fsl, path.join(ctx.root, file), 'run', RunMeta, runId).read();
    // A valid file of another run (copied over this one's) must not become this run's identity.
    if (meta && meta.run_id !== runId)
      return { meta: null, bad: { file, reason: `${file} is corrupt: it holds the meta of run ${meta.run_id}` } };
    return { meta, bad: null };
  } catch (err) {
    if (err instanceof AgentCheckpointCorruptionError) return { meta: null, bad: { file, reason: err.message } };
    throw err;
  }
}

/** A version-1 run, or undefined when the folder holds none (no log/ folder and no run.json). */
export async function loadV1(
  ctx: LoadCtx,
  runId: string,
  sink: LoadSink,
  opts: LoadOptions,
): Promise<LoadedFiles | undefined> {
  const dir = path.join(ctx.root, 'runs', runId);
  let names: string[];
  try {
    names = await ctx.fsl.readdir(path.join(dir, 'log'));
  } catch (err) {
    if (!isMissing(err)) throw err;
    names = [];
  }
  const files = parseLogNames(names);
  const cache = new Map<string, RawCommit | Error>();
  const at = byFirst(files);
  const read = async (f: LogFile) => {
    if (!cache.has(f.name))
      cache.set(
        f.name,
        await readCommit(ctx, runId, f).catch((err: unknown) =>
          err instanceof SchemaVersionError ? Promise.reject(err) : (err as Error),
        ),
      );
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
    meta =
      parsed?.success && parsed.data.run_id === runId
        ? parsed.data
        : opts.knownMeta?.run_id === runId
          ? opts.knownMeta
          : null;
    if (!meta && !metaBad) return undefined; // created but never written: not a run yet
    const file = metaBad?.file ?? rel(runId, 'run.json');
    const reason = metaBad?.reason ?? `${file} is missing`;
    const q = opts.repair && metaBad ? await ctx.quarantine(file, reason, runId) : null;
    if (meta && opts.repair)
      await new DurableJsonFile(ctx.fsl, path.join(ctx.root, file), 'run', RunMeta, runId, ctx.retryDelaysMs).write(
        meta,
      );
    const rebuilt = meta
      ? opts.repair
        ? 'rebuilt from the first commit (or the index)'
        : 'readable from the first commit (or the index)'
      : 'and no commit holds the run meta';
    reports.push(
      corruptionReport({
        run_id: runId,
        file,
        reason,
        quarantined: q ? [q] : [],
        lost: `nothing: run.json ${rebuilt}`,
      }),
    );
    if (!meta)
      throw new AgentCheckpointCorruptionError(
        `Run ${runId} cannot be opened: ${reason}, and no commit holds its meta.`,
        runId,
        file,
      );
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
  const isBad = (f: LogFile) => bad.some((b) => b.file.endsWith(f.name));
  const after = files.filter((f) => !used.has(f.name) && f.last >= p && !isBad(f));
  const superseded = files.filter((f) => !used.has(f.name) && f.last < p && !isBad(f));
  if (opts.repair)
    for (const f of superseded) await ctx.fsl.unlink(path.join(dir, 'log', f.name)).catch(() => undefined); // an interrupted compaction's leftovers
  const witnessed = [...cache.values()].some((c) => !(c instanceof Error) && c.witnessed);
  const { witness: wit } = await witnessOf(ctx, runId, await witnessFileSource(ctx, runId), {
    repair: opts.repair,
    witnessedCommits: witnessed,
    reports,
    notices,
  });
  const expect = Math.max(opts.expectCommits, wit?.commits ?? 0);
  const stopBad = bad.find((b) => b.file === rel(runId, 'log', at.get(p)?.[0]?.name ?? ''));
  const missing = !stopBad && (after.length > 0 || expect >= p) ? rel(runId, 'log', `${pad(p)}.json`) : null;
  for (const r of reports) r.fell_back_to_seq = survived.seq > 0 ? survived.seq : null;
  if (bad.length > 0 || missing) {
    // Read what the lost files still show before they move.
    const peeked = emptyPeek();
    if (stopBad || missing) {
      for (const f of [...(stopBad ? [stopBad.file] : []), ...after.map((x) => rel(runId, 'log', x.name))]) {
        peekInto(
          peeked,
          await ctx.fsl.readFile(path.join(ctx.root, f)).then(
            (b) => peekLost(String(b), runId),
            () => null,
          ),
        );
      }
      if (missing && !stopBad) peeked.unreadable++; // a missing file's content is unknown
    }
    const quarantined: Quarantined[] = [];
    if (opts.repair) {
      for (const b of bad) {
        const q = await ctx.quarantine(b.file, b.reason, runId);
        if (q) quarantined.push(q);
      }
      for (const f of after) {
        const q = await ctx.quarantine(
          rel(runId, 'log', f.name),
          `follows ${stopBad?.file ?? missing}, where the chain broke`,
          runId,
        );
        if (q) quarantined.push(q);
      }
    }
    const file = stopBad?.file ?? missing ?? bad[0]!.file;
    if (!stopBad && !missing) {
      reports.push(
        corruptionReport({
          run_id: runId,
          file,
          reason: bad[0]!.reason,
          quarantined,
          fell_back_to_seq: survived.seq || null,
          lost: 'nothing: an intact copy of the same commits was used',
        }),
      );
    } else {
      const witnessSays =
        wit && wit.commits >= p ? ` (the run's witness says ${wit.commits} commits were written)` : '';
      const reason = stopBad?.reason ?? `${missing} is missing${witnessSays}`;
      const onDisk = Math.max(0, ...files.map((f) => f.last));
      reports.push(lostTailReport({ runId, file, reason, quarantined, survived, witness: wit, onDisk, peeked }));
    }
  }
  return {
    result: { report: mergeReports(reports), commits: p - 1, witness: wit, notices },
    next: p,
    codec,
    meta,
    covered,
  };
}
