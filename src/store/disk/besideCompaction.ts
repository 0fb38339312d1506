// A compaction of a working run's log that never holds its appends up (RunLog.compactBeside): all the
// heavy part (the snapshot encoded, staged, read back and checked; a new segment holding the commits
// appended meanwhile) runs while the appends go on to the live segment, and only the swap waits for
// an append in flight: the last few commits added, two renames, each made durable before the next.
//
// Every state a crash can leave reads as the run: before the segment's rename, the temp files are not
// read (the next owner sweeps them); between the two renames, the old snapshot and old segment hold
// the whole run and the new segment's commits are all ones they hold (skipped); after the snapshot's
// rename, the new segment supersedes the old one (it starts where the snapshot ends: chain.ts), whose
// commits after the snapshot are encoded against the old log and must not be read after it.
import crypto from 'node:crypto';
import { Breather } from '../../common/breather';
import { advance, type Codec, type CodecDelta } from './codec';
import { fsyncDir, publish, UnsyncedPublishError } from './durableFile';
import { encodeFrame } from './frame';
import type { FsLayer } from './fsLayer';
import { SNAPSHOT_FILE, type SegmentTail } from './load';
import type { RunLogState } from './runLogState';
import { parseSegmentNames, SEGMENT_VERSION, segmentName, type SegmentHeader } from './segment';
import { stageSnapshot } from './snapshotStage';
import { areaOf, WITNESS_AREA } from './witness';
import type { CommitOp } from '../core/storedSchema';

/** What the compaction reads and changes of the run's log (RunLog.port). */
export interface LogPort {
  fsl: FsLayer;
  runId: string;
  s: RunLogState;
  retryDelaysMs?: readonly number[];
  file(...parts: string[]): string;
  /** The ops of the commits appended since the compaction began (or since the last call), in order. */
  takeSince(): (readonly CommitOp[])[];
  commitFrame(n: number, ops: readonly CommitOp[], codec: Codec, first: boolean): { frame: Buffer; next: CodecDelta };
  /** Appends go on to `fresh` (open as `fd`), encoded against `codec`; the snapshot covers `covered`. */
  adopt(fresh: SegmentTail, fd: number, codec: Codec, covered: number): Promise<void>;
  /** Log bytes from which the snapshot is made in a worker thread (snapshotStage.ts). */
  offThreadFrom: number;
}

/** Compacts the log as of commit `last` (`ops`), the live segment being `tail` (see the file's head). */
export async function compactBeside(
  log: LogPort,
  last: number,
  tail: SegmentTail,
  ops: readonly CommitOp[],
  end: unknown,
  critical: (fn: () => Promise<void>) => Promise<void>,
  owned: () => Promise<void>,
): Promise<void> {
  const { fsl } = log;
  const snapFile = log.file(SNAPSHOT_FILE);
  // (The live segment's length now, before an append moves it: where commit `last` ends.)
  const offThread = {
    files: { dir: log.file(), tail: { name: tail.name, size: tail.size } },
    from: log.offThreadFrom,
    background: true,
  };
  const staged = await stageSnapshot(fsl, snapFile, log.runId, log.s.meta, ops, last, end, offThread);
  const name = segmentName(last + 1);
  const segTmp = log.file(`.${name}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`);
  let fd: number | null = null;
  let adopted = false;
  try {
    fd = await fsl.createExclusive(segTmp);
    const seg = new SegmentBuilder(log, fd, last + 1, staged.codec);
    await seg.start();
    await seg.add(log.takeSince(), false);
    await critical(async () => {
      if (log.s.tail !== tail) throw new Error('the log was compacted meanwhile');
      await owned();
      await seg.add(log.takeSince(), true);
      await publish(fsl, segTmp, log.file(name), log.retryDelaysMs).catch(async (err: unknown) => {
        await fsl.unlink(log.file(name)).catch(() => undefined); // (renamed, not known durable: not relied on)
        throw err;
      });
      try {
        await publish(fsl, staged.tmp, snapFile, log.retryDelaysMs);
      } catch (err) {
        // Renamed but its folder not synced: it is the log now (the old segment is superseded).
        if (err instanceof UnsyncedPublishError) await adopt();
        else await fsl.unlink(log.file(name)).catch(() => undefined); // not in place: the old files go on alone
        throw err;
      }
      await adopt();
      async function adopt() {
        adopted = true;
        await log.adopt(seg.tail(), fd!, seg.codec, last);
      }
    });
  } catch (err) {
    if (!adopted) {
      if (fd !== null) await fsl.close(fd).catch(() => undefined);
      await fsl.unlink(segTmp).catch(() => undefined);
      await fsl.unlink(staged.tmp).catch(() => undefined);
    }
    throw err;
  }
  // The old segments: every commit they hold is in the snapshot or the new segment.
  const names = parseSegmentNames(await fsl.readdir(log.file()));
  for (const s of names) if (s.first < last + 1) await fsl.unlink(log.file(s.name));
  await fsyncDir(fsl, log.file());
}

/** The new segment as it is built under its temp name: its header, then the commits since, in order. */
class SegmentBuilder {
  private size = 0;
  private headerEnd = 0;
  private n: number;

  constructor(
    private readonly log: LogPort,
    private readonly fd: number,
    private readonly first: number,
    readonly codec: Codec,
  ) {
    this.n = first;
  }

  async start(): Promise<void> {
    const { runId, meta } = { runId: this.log.runId, meta: this.log.s.meta };
    const header: SegmentHeader = { segment: SEGMENT_VERSION, run_id: runId, first: this.first, meta };
    const frame = encodeFrame(header);
    await this.log.fsl.pwrite(this.fd, Buffer.concat([frame, areaOf(this.log.s.witness)]), 0);
    this.headerEnd = frame.length;
    this.size = frame.length + WITNESS_AREA;
  }

  /** The commits `since` appended, re-encoded to follow the snapshot, and made durable (`sync`: even if none). */
  async add(since: (readonly CommitOp[])[], sync: boolean): Promise<void> {
    const frames: Buffer[] = [];
    // (Many commits come while a long run is compacted: the run's own writes get turns between them.)
    const breather = new Breather();
    for (const ops of since) {
      const { frame, next } = this.log.commitFrame(this.n, ops, this.codec, this.n === this.first);
      advance(this.codec, next);
      frames.push(frame);
      this.n++;
      if (breather.due) await breather.tick();
    }
    if (frames.length > 0) {
      const bytes = Buffer.concat(frames);
      await this.log.fsl.pwrite(this.fd, bytes, this.size);
      this.size += bytes.length;
    }
    if (sync || frames.length > 0) await this.log.fsl.fdatasync(this.fd);
  }

  /** Where appends go on once it is the log's: the frames after the header not yet in a copy. */
  tail(): SegmentTail {
    const areaEnd = this.headerEnd + WITNESS_AREA;
    const name = segmentName(this.first);
    return {
      name,
      first: this.first,
      size: this.size,
      witnessAt: this.headerEnd,
      copiedTo: areaEnd,
      allocated: this.size,
    };
  }
}
