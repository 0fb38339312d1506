// The tail witness of a run: what the log held when it was last acknowledged. A run's own log cannot
// testify to what is missing from it: a deleted or truncated newest commit looks exactly like a crash
// before it was written, and a segment destroyed as a whole (zeroed, overwritten, replaced, deleted)
// looks like one being created. The witness can: it is written only after a commit is acknowledged, so
// it never claims more than the log held, and a log shorter than its witness lost acknowledged data.
//
// It is kept in two places, each as two fixed-size slots rewritten in place (commit n goes to slot
// n % 2, so a torn write spoils one slot at most; the valid slot with the most commits counts):
//  - runs/<id>/witness, a file of its own: a header frame naming the run (and holding its meta, so a
//    run whose log is gone can still be named), then the slots. Outside the segment it vouches for, so
//    no damage to the segment takes it along;
//  - the segment's witness area, right after its header frame: the witness as the segment began.
// After each barrier the file's slot is written (one small pwrite, no fsync): a process crash keeps it,
// and it reaches the disk with the kernel's writeback or the run's next release or room written ahead
// (runLog.ts), which fdatasync it off the step path. A power loss before that leaves it behind: it then
// claims less, never more.
//
// A slot: `<json padded with spaces><space><16 hex of sha256(json)>\n`; a slot never written is all
// spaces and a newline.
import { sha256 } from '../../common/hash';
import { RunMeta } from '../api/schema';
import { TailWitness } from '../core/storedSchema';
import { parseFast } from '../core/fastValid';
import { encodeFrame, readFrame } from './frame';

export { TailWitness };
/** The witness file in a run's folder. */
export const WITNESS_FILE = 'witness';
/** The witness file's version (its header frame says it). */
export const WITNESS_VERSION = 1;
/** A slot: the witness in short keys fits with room to spare. */
export const SLOT = 128;
/** Two slots: the witness area after a segment's header frame, and after the witness file's. */
export const WITNESS_AREA = 2 * SLOT;
const SUM = 16;

/**
 * `damaged`: one slot was bad (a process crash cannot tear a slot, so that is damage); the other is
 * used. `empty`: nothing written yet — the owner writes it after the first acknowledged commit, so a
 * crash in between leaves it so: it testified to nothing yet, as if missing (not damage).
 */
export type WitnessRead =
  | { kind: 'missing'; empty?: true }
  | { kind: 'ok'; witness: TailWitness; damaged: string | null }
  | { kind: 'bad'; reason: string };

const SHORT = { commits: 'c', seq: 'q', step: 'p', state: 's', intents: 'i', results: 'r', ms: 'm' } as const;

/** One slot holding `w`. */
export function encodeSlot(w: TailWitness): Buffer {
  const json = JSON.stringify({ c: w.commits, q: w.seq, p: w.step, s: w.state, i: w.intents, r: w.results, m: w.ms });
  if (json.length > SLOT - SUM - 2) throw new Error(`witness too large (${json.length} bytes)`);
  return Buffer.from(`${json.padEnd(SLOT - SUM - 2)} ${sha256(json).slice(0, SUM)}\n`, 'latin1');
}

/** A slot never written: spaces and a newline, byte for byte (anything else is a witness, or damage). */
const BLANK_SLOT = Buffer.from(`${' '.repeat(SLOT - 1)}\n`, 'latin1');

/** A witness area whose slots were never written. */
export const blankArea = (): Buffer => Buffer.concat([BLANK_SLOT, BLANK_SLOT]);

/** The area holding `w` in both slots (a new segment, or a witness rewritten whole). */
export const areaOf = (w: TailWitness | null): Buffer => {
  if (!w) return blankArea();
  const slot = encodeSlot(w);
  return Buffer.concat([slot, slot]);
};

function decodeSlot(buf: Buffer): TailWitness | 'blank' | null {
  if (buf.equals(BLANK_SLOT)) return 'blank';
  if (buf.length !== SLOT || buf[SLOT - 1] !== 0x0a) return null;
  const text = buf.toString('latin1');
  const json = text.slice(0, SLOT - SUM - 2).replace(/ +$/, '');
  if (text.slice(SLOT - SUM - 1, SLOT - 1) !== sha256(json).slice(0, SUM)) return null;
  try {
    const v = JSON.parse(json) as Record<string, unknown>;
    const r = parseFast(TailWitness, Object.fromEntries(Object.entries(SHORT).map(([k, s]) => [k, v[s]])));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** The witness area at byte `at` of `buf`: the valid slot with the most commits. */
export function readWitnessArea(buf: Buffer, at: number): WitnessRead {
  const area = buf.subarray(at, at + WITNESS_AREA);
  const slots = [area.subarray(0, SLOT), area.subarray(SLOT, WITNESS_AREA)].map(decodeSlot);
  const valid = slots.filter((w): w is TailWitness => w !== null && w !== 'blank');
  const blank = slots.filter((w) => w === 'blank').length;
  if (valid.length === 0)
    return blank === 2 ? { kind: 'missing', empty: true } : { kind: 'bad', reason: 'no slot passes its checksum' };
  const damaged =
    area.length < WITNESS_AREA
      ? `${area.length} bytes where ${WITNESS_AREA} were written`
      : valid.length + blank < 2
        ? `slot ${slots[0] === null ? 1 : 2} fails its checksum`
        : null;
  return { kind: 'ok', witness: valid.reduce((a, b) => (b.commits > a.commits ? b : a)), damaged };
}

/** The witness file of a run: its header frame (the run and its meta), then the area holding `w`. */
export function witnessFile(meta: RunMeta, w: TailWitness | null): { bytes: Buffer; areaAt: number } {
  const header = encodeFrame({ witness: WITNESS_VERSION, run_id: meta.run_id, meta });
  return { bytes: Buffer.concat([header, areaOf(w)]), areaAt: header.length };
}

/** The witness file as read: its slots, where they start, and the meta its header holds (null: unreadable). */
export interface WitnessFileRead {
  read: WitnessRead;
  areaAt: number | null;
  meta: RunMeta | null;
}

/** Reads a run's witness file (`buf`; null: there is none). A header of another run or version is bad. */
export function readWitnessFile(buf: Buffer | null, runId: string): WitnessFileRead {
  if (!buf) return { read: { kind: 'missing' }, areaAt: null, meta: null };
  const h = readFrame(buf, 0);
  const v = h.ok ? (h.frame.value as { witness?: unknown; run_id?: unknown; meta?: unknown } | null) : null;
  const meta = parseFast(RunMeta, v?.meta);
  const why = !h.ok
    ? `its header frame is bad (${h.reason})`
    : v?.witness !== WITNESS_VERSION
      ? 'its header frame is not a witness header of this version'
      : v.run_id !== runId || !meta.success || meta.data.run_id !== runId
        ? `it names run ${String(v.run_id)}`
        : null;
  if (why || !h.ok || !meta.success)
    return { read: { kind: 'bad', reason: why ?? 'unreadable' }, areaAt: null, meta: null };
  return { read: readWitnessArea(buf, h.frame.end), areaAt: h.frame.end, meta: meta.data };
}
