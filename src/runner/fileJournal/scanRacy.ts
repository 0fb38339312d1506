// Racy files (git's word): a file statted within its file system's timestamp granularity of its
// last change. A command that rewrites it with the same size in that same tick leaves size, times
// and inode as they were, so the stat alone would miss the change. Such a file's content is
// fingerprinted when it is statted (a few files: the ones changed in the last 100 ms, or 2 s where
// timestamps are whole seconds); past the budget, the scan waits until the tick has passed and
// stats them again, when the stat proves itself.
import { lstatSync } from 'node:fs';
import { sha256 } from '../../common/hash';
import { readSmallRegularSync } from '../tools/regularFile';
import { changeTime, type FileSig, fileSig, racyMargin, sameStat } from './scanTree';

const MAX_FILES = 256;
const MAX_BYTES = 16 * 1024 * 1024;
const MAX_FILE_BYTES = 4 * 1024 * 1024;

interface Waiting {
  map: Map<string, FileSig>;
  name: string;
  abs: string;
  sig: FileSig;
}

export class Fingerprints {
  hashed = 0;
  waitedMs = 0;
  /** Racy files that could be neither fingerprinted nor waited out (still changing): a same-size change to them may not show. */
  unverified = 0;
  private bytes = 0;
  private readonly waiting: Waiting[] = [];

  /**
   * `sig`: a fresh stat of the file; `prev`: what the index had. Returns the signature to keep:
   * `prev` itself when nothing changed (so the folder's map can stay the same object).
   */
  judge(abs: string, sig: FileSig, prev: FileSig | undefined): FileSig {
    if (prev && sameStat(prev, sig)) {
      if (!prev.racy) return prev; // statted long enough after its last change: a later change shows
      if (prev.fp === undefined) return sig.racy ? prev : settled(prev); // unproven then, as the scan said
      // Compared with the fingerprint it has (no budget: the proof is owed; same size, ≤ 4 MB).
      const fp = this.hash(abs, sig.size, true);
      if (fp === prev.fp) return sig.racy ? prev : settled(prev);
      if (fp !== undefined) return { ...sig, fp };
      this.unverified++;
      return sig;
    }
    if (sig.racy) {
      const fp = this.hash(abs, sig.size, false);
      if (fp !== undefined) sig.fp = fp;
    }
    return sig;
  }

  /**
   * Registers where a new racy signature without a fingerprint sits (a map the scan is building,
   * never one a snapshot holds), to be statted again after the tick.
   */
  track(map: Map<string, FileSig>, name: string, abs: string, sig: FileSig): void {
    if (sig.racy && sig.fp === undefined) this.waiting.push({ map, name, abs, sig });
  }

  /** Waits (at most one tick margin, ≤ 2.1 s) for the unproven racy files, then stats them again. */
  async settle(): Promise<void> {
    if (this.waiting.length === 0) return;
    const until = Math.max(...this.waiting.map((w) => changeTime(w.sig) + racyMargin(w.sig)));
    const wait = Math.min(until - Date.now(), 2_200);
    if (wait > 0) {
      const t = performance.now();
      await new Promise((r) => setTimeout(r, wait + 1));
      this.waitedMs += performance.now() - t;
    }
    const statAt = Date.now();
    for (const w of this.waiting) {
      const st = lstatSync(w.abs, { throwIfNoEntry: false });
      if (!st?.isFile()) continue; // gone: its folder changed, the next scan re-reads it
      const now = fileSig(st, statAt);
      // Changed again while we waited: keep the new stat (it differs, so it shows as a change).
      w.map.set(w.name, now);
      if (now.racy) this.unverified++;
    }
    this.waiting.length = 0;
  }

  private hash(abs: string, size: number, owed: boolean): string | undefined {
    if (!owed && (this.hashed >= MAX_FILES || size > MAX_FILE_BYTES || this.bytes + size > MAX_BYTES)) return undefined;
    // Non-blocking and bounded: a FIFO or a huge file swapped in since the stat must not stall the scan.
    const buf = readSmallRegularSync(abs, MAX_FILE_BYTES);
    if (buf === null) return undefined;
    this.hashed++;
    this.bytes += buf.length;
    return sha256(buf);
  }
}

/** The same file, no longer racy (its fingerprint kept: harmless, and it compares equal). */
function settled(prev: FileSig): FileSig {
  const { racy: _racy, ...rest } = prev;
  return rest;
}
