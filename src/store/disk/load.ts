// Loading a run from disk (format: docs/format.md). Three parts: its files are read and its commits
// applied in order until the first that does not check out (chain.ts); what stopped the chain, and
// any other damage found, is judged — what is lost, what to report, what would repair it (damage.ts,
// pure); and the run's owner carries the repair out (repair.ts). A reader repairs nothing: it reports
// and reads the fallback.
import path from 'node:path';
import { AgentCheckpointCorruptionError } from '../api/errors';
import { corruptionReport, type CorruptionReport } from '../api/types';
import type { LoadOptions, LoadSink } from '../core/engine';
import {
  applyChain,
  lastCommitIn,
  metaOf,
  peekLost,
  readSegmentFile,
  type SegmentFile,
  type SegmentTail,
} from './chain';
import { lostTailReport, mergeReports, rel, type LoadCtx, type LoadedFiles } from './commit';
import { judge, type Findings } from './damage';
import { writeDurably } from './durableFile';
import { isMissing, type FsLayer } from './fsLayer';
import { repair } from './repair';
import { parseSegmentNames, witnessAreaAt } from './segment';
import { decodeSnapshot, type ReadSnapshot } from './snapshotFile';
import { readWitnessArea, readWitnessFile, WITNESS_AREA, WITNESS_FILE, type WitnessRead } from './witness';

export { type SegmentTail } from './chain';
export const SNAPSHOT_FILE = 'snapshot.json';

export interface LoadedRun extends LoadedFiles {
  /** The segment to append to (null: none yet; the first write creates one). */
  tail: SegmentTail | null;
  /** The snapshot was read from its spare copy after damage: the run is compacted before its next write. */
  compactFirst: boolean;
  /** Where the witness file's slots start (null: it is missing or bad, and is written again whole). */
  witnessAt: number | null;
}

export async function loadRunFiles(
  ctx: LoadCtx,
  runId: string,
  sink: LoadSink,
  opts: LoadOptions,
): Promise<LoadedRun | undefined> {
  const dir = path.join(ctx.root, 'runs', runId);
  let names: string[];
  try {
    names = await ctx.fsl.readdir(dir);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
  const segNames = parseSegmentNames(names);
  const witnessBuf = names.includes(WITNESS_FILE) ? await readOrNull(ctx.fsl, path.join(dir, WITNESS_FILE)) : null;
  // A folder that holds no log and no witness of one, and that the index knows no commit of: a run
  // being created when the process stopped (nothing in it was ever acknowledged), or no run.
  if (segNames.length === 0 && !names.includes(SNAPSHOT_FILE) && !witnessBuf && opts.expectCommits === 0)
    return undefined;
  const segs: SegmentFile[] = [];
  for (const s of segNames)
    segs.push(readSegmentFile(runId, s.name, s.first, await ctx.fsl.readFile(path.join(dir, s.name))));
  const snapFile = rel(runId, SNAPSHOT_FILE);
  const snap = await readSnapshot(ctx, runId, snapFile);
  const witness = readWitnessFile(witnessBuf, runId);
  const meta = metaOf(snap, segs, runId) ?? witness.meta ?? (opts.knownMeta?.run_id === runId ? opts.knownMeta : null);
  if (!meta)
    throw new AgentCheckpointCorruptionError(
      `Run ${runId} cannot be opened: no segment header, snapshot or witness holds its meta.`,
      runId,
      segs[0]?.file ?? snapFile,
    );
  sink.meta(meta);
  const chain = applyChain(runId, meta, sink, { file: snapFile, read: snap }, segs);
  const area = [...segs].reverse().find((s) => s.header && s.parsed.witnessAt !== null);
  const findings: Findings = {
    runId,
    segments: segs.map((s) => ({
      file: s.file,
      headerBad: s.headerBad,
      mended: chain.superseded.has(s) ? null : mendedOf(s), // (not read: what is wrong in it matters to nobody)
      covered:
        chain.superseded.has(s) ||
        (chain.covered > 0 &&
          s.name !== chain.tail?.name &&
          !s.parsed.stop &&
          !s.headerBad &&
          lastCommitIn(s) <= chain.covered),
      used: chain.used.has(s) || chain.superseded.has(s),
    })),
    snapshot: {
      file: snapFile,
      present: snap !== null,
      bad: chain.snapBad,
      mended: snap && !(snap instanceof Error) && !chain.snapBad ? snap.damaged : null,
    },
    next: chain.next,
    stop: chain.stop,
    witnessFile: { file: rel(runId, WITNESS_FILE), read: witness.read },
    witnessArea: area ? { file: area.file, read: readWitnessArea(area.buf, area.parsed.witnessAt!) } : null,
    indexCommits: opts.expectCommits,
    repair: opts.repair,
  };
  const verdict = judge(findings);
  const kept = opts.repair
    ? await repair(ctx, runId, verdict.plan, (file) => rewriteMended(ctx, segs, file))
    : new Map();
  const later = segs.filter((s) => !chain.used.has(s) && !chain.superseded.has(s) && s !== chain.stop?.seg);
  const reports: CorruptionReport[] = verdict.reports.map((r, i) => {
    const quarantined = kept.get(i) ?? [];
    if (r.kept !== null)
      return corruptionReport({
        run_id: runId,
        file: r.file,
        reason: r.reason,
        quarantined,
        lost: `nothing: ${r.kept}${opts.repair ? '' : ' (when the run is next resumed)'}`,
      });
    const onDisk = Math.max(chain.next - 1, chain.covered, ...segs.map(lastCommitIn));
    return lostTailReport({
      runId,
      file: r.file,
      reason: r.reason,
      quarantined,
      survived: chain.survived,
      witness: verdict.witness,
      onDisk,
      peeked: peekLost(chain, later, runId),
    });
  });
  for (const r of reports) r.fell_back_to_seq ??= chain.survived.seq > 0 ? chain.survived.seq : null;
  return {
    // A witness to write again is handed on as none, so the owner writes it whole.
    result: {
      report: mergeReports(reports),
      commits: chain.next - 1,
      witness: verdict.rewriteWitness ? null : verdict.witness,
      notices: verdict.notices,
    },
    next: chain.next,
    codec: chain.codec,
    meta,
    covered: chain.covered,
    tail: chain.tail,
    compactFirst: findings.snapshot.mended !== null,
    witnessAt: verdict.rewriteWitness ? null : witness.areaAt,
  };
}

/** What a segment read whole after damage says of itself (null: nothing was wrong with it). */
function mendedOf(s: SegmentFile): { reason: string; kept: string } | null {
  const c = s.parsed.corrected;
  if (s.rebuilt)
    return {
      reason: s.rebuilt.reason,
      kept: 'every commit was read from a copy or a frame that is whole; the file is rewritten whole',
    };
  if (c.length === 0) return null;
  const where = c.map((x) => `byte ${x.offset} bit ${x.bit}`).join(', ');
  return {
    reason: `${s.file} is corrupt: ${c.length === 1 ? 'a frame' : `${c.length} frames`} failed the checksum by one flipped bit (${where})`,
    kept: "each flipped bit was found from its frame's checksum and corrected, and written back",
  };
}

/** A mended segment written again: a rebuilt one whole (temp file, rename), corrected bits in place. */
async function rewriteMended(ctx: LoadCtx, segs: SegmentFile[], file: string): Promise<void> {
  const seg = segs.find((s) => s.file === file)!;
  const target = path.join(ctx.root, file);
  if (seg.rebuilt) return writeDurably(ctx.fsl, target, seg.buf, { mode: 'replace' });
  const fd = await ctx.fsl.openForUpdate(target);
  try {
    for (const x of seg.parsed.corrected) await ctx.fsl.pwrite(fd, seg.buf.subarray(x.offset, x.offset + 1), x.offset);
    await ctx.fsl.fdatasync(fd);
  } finally {
    await ctx.fsl.close(fd);
  }
}

async function readOrNull(fsl: FsLayer, file: string): Promise<Buffer | null> {
  try {
    return await fsl.readFile(file);
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
}

/** The snapshot read (its spare copy where the plain one is damaged); an Error: unreadable; null: there is none. */
async function readSnapshot(ctx: LoadCtx, runId: string, file: string): Promise<ReadSnapshot | Error | null> {
  const buf = await readOrNull(ctx.fsl, path.join(ctx.root, file));
  if (!buf) return null;
  try {
    return decodeSnapshot(buf, file, runId);
  } catch (err) {
    if (!(err instanceof AgentCheckpointCorruptionError)) throw err; // (a version this one does not read is refused)
    return err;
  }
}

/**
 * A run's witness, for the index: the witness file's (one small read), or else the head of its newest
 * segment; null when neither can be read.
 */
export async function readRunWitness(fsl: FsLayer, runDir: string, runId: string): Promise<WitnessRead | null> {
  const file = readWitnessFile(await readOrNull(fsl, path.join(runDir, WITNESS_FILE)).catch(() => null), runId);
  if (file.read.kind === 'ok') return file.read;
  const names = await fsl.readdir(runDir).catch(() => null);
  const newest = names && parseSegmentNames(names).at(-1);
  if (!newest) return null;
  const seg = path.join(runDir, newest.name);
  let head = await fsl.readFrom(seg, 0, HEAD_BYTES).catch(() => null);
  // A header longer than that (a long task in its meta): its length says how much to read.
  const len = head && /^(\d{1,12})\t/.exec(head.toString('latin1', 0, 13));
  const need = len ? len[1]!.length + 10 + Number(len[1]) + 1 + WITNESS_AREA : 0;
  if (head && need > head.length && head.length === HEAD_BYTES)
    head = await fsl.readFrom(seg, 0, need).catch(() => null);
  const at = head ? witnessAreaAt(head) : null;
  return head && at !== null ? readWitnessArea(head, at) : null;
}

const HEAD_BYTES = 16 * 1024;
