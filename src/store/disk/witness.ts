// The tail witness of a run: what the log held when it was last acknowledged. A run's own log cannot
// testify to what is missing from its end: a deleted or truncated newest commit looks exactly like a
// crash that happened before it was written. The witness can: it is written only after a commit is
// acknowledged, so it never claims more than the log held, and a log shorter than its witness lost
// data that was acknowledged (reported, never taken for a crash).
//
// Where it lives. Since segment version 4 in the segment itself, right after its header frame: two
// fixed-size slots written in place (commit n goes to slot n % 2), so a torn write spoils one slot at
// most and the reader takes the valid slot with the most commits. A truncated or cut-short log keeps
// its head, so the witness outlives the tail it speaks for; and the segment's own next barrier
// (fdatasync) makes the slot durable — no file, file descriptor or fsync of its own. Until then (or,
// for a run let go, until the kernel writes it back) a power loss can leave it behind: then it claims
// less, never more. A disk that honours its flushes keeps every acknowledged commit through a power
// loss anyway; the witness is there for the damage that comes after. Before version 4 it was a file
// of its own, runs/<id>/witness, with 256-byte slots, fdatasync'd by a timer a second after each
// write (read here until the run is converted; the conversion carries it into the new segment).
//
// A slot: `<json padded with spaces><space><16 hex of sha256(json)>\n`; a slot never written is all
// spaces and a newline.
import path from 'node:path';
import { sha256 } from '../../common/hash';
import { errorMessage } from '../../common/errors';
import { TailWitness } from '../core/storedSchema';
import { parseFast } from '../core/fastValid';
import { isMissing, type FsLayer } from './fsLayer';

export { TailWitness };
/** Before segment version 4: the witness's own file. */
export const WITNESS_FILE = 'witness';
const LEGACY_SLOT = 256;
/** A slot in a segment (version 4 on): the witness in short keys fits with room to spare. */
export const SLOT = 128;
/** The witness area after a segment's header frame. */
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

/** The slot's JSON: short keys (a segment's slot), or the witness's own (the file's). */
const SHORT = { commits: 'c', seq: 'q', step: 'p', state: 's', intents: 'i', results: 'r', ms: 'm' } as const;
type Short = { [K in keyof typeof SHORT as (typeof SHORT)[K]]: TailWitness[K] };

function slotText(json: string, size: number): Buffer {
  if (json.length > size - SUM - 2) throw new Error(`witness too large (${json.length} bytes)`);
  return Buffer.from(`${json.padEnd(size - SUM - 2)} ${sha256(json).slice(0, SUM)}\n`, 'latin1');
}

/** One slot of a segment's witness area. */
export function encodeSlot(w: TailWitness): Buffer {
  const s: Short = { c: w.commits, q: w.seq, p: w.step, s: w.state, i: w.intents, r: w.results, m: w.ms };
  return slotText(JSON.stringify(s), SLOT);
}

/** A witness area whose slots were never written. */
export const blankArea = (): Buffer =>
  Buffer.concat([0, 1].map(() => Buffer.from(`${' '.repeat(SLOT - 1)}\n`, 'latin1')));

/** The area holding `w` in both slots (a new segment, or a witness rewritten whole). */
export const areaOf = (w: TailWitness): Buffer => {
  const slot = encodeSlot(w);
  return Buffer.concat([slot, slot]);
};

type Slot = TailWitness | 'blank' | null;

function decodeSlot(buf: Buffer, size: number, short: boolean): Slot {
  if (buf.length !== size || buf[size - 1] !== 0x0a) return null;
  const text = buf.toString('latin1');
  const json = text.slice(0, size - SUM - 2).trimEnd();
  if (json === '' && text.trim() === '') return 'blank';
  if (text.slice(size - SUM - 1, size - 1) !== sha256(json).slice(0, SUM)) return null;
  try {
    const v = JSON.parse(json) as Record<string, unknown>;
    const long = short ? Object.fromEntries(Object.entries(SHORT).map(([k, s]) => [k, v[s]])) : v;
    const r = parseFast(TailWitness, long); // (built fresh just above)
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** Two slots (of `size` bytes each) at the start of `buf`: the valid one with the most commits. */
function readSlots(buf: Buffer, size: number, short: boolean): WitnessRead {
  const slots = [buf.subarray(0, size), buf.subarray(size, 2 * size)].map((b) => decodeSlot(b, size, short));
  const valid = slots.filter((w): w is TailWitness => w !== null && w !== 'blank');
  const blank = slots.filter((w) => w === 'blank').length;
  if (valid.length === 0) {
    if (blank === 2) return { kind: 'missing', empty: true };
    return { kind: 'bad', reason: 'no slot passes its checksum' };
  }
  const damaged =
    buf.length < 2 * size
      ? `${buf.length} bytes where ${2 * size} were written`
      : valid.length + blank < 2
        ? `slot ${slots[0] === null ? 1 : 2} fails its checksum`
        : null;
  return { kind: 'ok', witness: valid.reduce((a, b) => (b.commits > a.commits ? b : a)), damaged };
}

/** The witness area of a segment (version 4 on), `at` its first byte in `buf`. */
export function readWitnessArea(buf: Buffer, at: number): WitnessRead {
  return readSlots(buf.subarray(at, at + WITNESS_AREA), SLOT, true);
}

/** The witness file of a run written before segment version 4. Missing or empty → missing; no valid slot → bad. */
export async function readWitnessFile(fsl: FsLayer, runDir: string): Promise<WitnessRead> {
  let buf: Buffer;
  try {
    buf = await fsl.readFile(path.join(runDir, WITNESS_FILE));
  } catch (err) {
    if (isMissing(err)) return { kind: 'missing' };
    return { kind: 'bad', reason: `unreadable (${errorMessage(err)})` };
  }
  if (buf.length === 0) return { kind: 'missing', empty: true };
  const r = readSlots(buf, LEGACY_SLOT, false);
  if (r.kind === 'ok' && !r.damaged && buf.length !== 2 * LEGACY_SLOT)
    return { ...r, damaged: `${buf.length} bytes where ${2 * LEGACY_SLOT} were written` };
  return r;
}
