// The tail witness of a run: runs/<id>/witness, rewritten in place after every durable commit.
// A run's own log cannot testify to what is missing from its end: a deleted or truncated newest
// commit looks exactly like a crash that happened before it was written. The witness can: it is
// written only after a commit is acknowledged, so it never claims more than the log held, and a
// log shorter than its witness lost data that was acknowledged (reported, never taken for a crash).
//
// Cost: one small pwrite to a file kept open, no fsync on the step path (the OS has it the moment
// it returns, so it survives a crash of the process); it is fdatasync'd lazily within a second and
// at release. After a power loss it may lag by that last second — then it claims less, never more.
//
// Layout: two fixed-size slots written alternately (commit n goes to slot n % 2), each
// `<json padded with spaces><space><16 hex of sha256(json)>\n`: a torn write spoils one slot at
// most, and the reader takes the valid slot with the most commits.
import path from 'node:path';
import { sha256 } from '../../common/hash';
import { errorMessage } from '../../common/errors';
import { TailWitness } from '../core/storedSchema';
import { isMissing, type FsLayer } from './fsLayer';

export { TailWitness };
export const WITNESS_FILE = 'witness';
const SLOT = 256;
const SUM = 16;

/**
 * `damaged`: one slot was bad (a process crash cannot tear a slot, so that is damage); the other is
 * used. `empty`: the file exists and holds nothing — the owner creates it when it takes the run and
 * writes it after the first acknowledged commit, so a crash in between leaves it so: it testified to
 * nothing yet, as if missing (not damage).
 */
export type WitnessRead =
  | { kind: 'missing'; empty?: true }
  | { kind: 'ok'; witness: TailWitness; damaged: string | null }
  | { kind: 'bad'; reason: string };

export function encodeSlot(w: TailWitness): Buffer {
  const json = JSON.stringify(w);
  if (json.length > SLOT - SUM - 2) throw new Error(`witness too large (${json.length} bytes)`);
  return Buffer.from(`${json.padEnd(SLOT - SUM - 2)} ${sha256(json).slice(0, SUM)}\n`, 'latin1');
}

function decodeSlot(buf: Buffer): TailWitness | null {
  if (buf.length !== SLOT || buf[SLOT - 1] !== 0x0a) return null;
  const text = buf.toString('latin1');
  const json = text.slice(0, SLOT - SUM - 2).trimEnd();
  if (text.slice(SLOT - SUM - 1, SLOT - 1) !== sha256(json).slice(0, SUM)) return null;
  try {
    const r = TailWitness.safeParse(JSON.parse(json));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** Reads the witness: the valid slot with the most commits. Missing or empty → missing; no valid slot → bad. */
export async function readWitness(fsl: FsLayer, runDir: string): Promise<WitnessRead> {
  let buf: Buffer;
  try {
    buf = await fsl.readFile(path.join(runDir, WITNESS_FILE));
  } catch (err) {
    if (isMissing(err)) return { kind: 'missing' };
    return { kind: 'bad', reason: `unreadable (${errorMessage(err)})` };
  }
  if (buf.length === 0) return { kind: 'missing', empty: true };
  const slots = [buf.subarray(0, SLOT), buf.subarray(SLOT, 2 * SLOT)].map((b) =>
    b.length === SLOT ? decodeSlot(b) : null,
  );
  const valid = slots.filter((w): w is TailWitness => w !== null);
  if (valid.length === 0) return { kind: 'bad', reason: 'no slot passes its checksum' };
  const damaged =
    buf.length !== 2 * SLOT
      ? `${buf.length} bytes where ${2 * SLOT} were written`
      : valid.length < 2
        ? `slot ${slots[0] ? 2 : 1} fails its checksum`
        : null;
  return { kind: 'ok', witness: valid.reduce((a, b) => (b.commits > a.commits ? b : a)), damaged };
}

/** The owner's open witness: in-place slot writes, a lazy fdatasync. */
export class WitnessWriter {
  private syncTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private chain: Promise<void> = Promise.resolve();

  private constructor(
    private readonly fsl: FsLayer,
    private readonly fd: number,
    private readonly syncAfterMs: number,
    /** Both slots hold a witness (a new file gets both on its first write, so no slot is ever blank). */
    private whole: boolean,
  ) {}

  static async open(fsl: FsLayer, runDir: string, syncAfterMs = 1000): Promise<WitnessWriter> {
    const file = path.join(runDir, WITNESS_FILE);
    const fd = await fsl.openForUpdate(file);
    const size = await fsl.stat(file).then(
      (st) => st.size,
      () => 0,
    );
    return new WitnessWriter(fsl, fd, syncAfterMs, size === 2 * SLOT);
  }

  /** Writes both slots (a fresh or rebuilt witness), durably. */
  async reset(w: TailWitness): Promise<void> {
    const slot = encodeSlot(w);
    await this.serial(async () => {
      await this.fsl.pwrite(this.fd, Buffer.concat([slot, slot]), 0);
      await this.fsl.fdatasync(this.fd);
      this.whole = true;
    });
  }

  /** After an acknowledged commit. Never fails its caller: a witness that lags only weakens detection. */
  write(w: TailWitness): Promise<void> {
    return this.serial(async () => {
      const slot = encodeSlot(w);
      if (this.whole) await this.fsl.pwrite(this.fd, slot, (w.commits % 2) * SLOT);
      else {
        await this.fsl.pwrite(this.fd, Buffer.concat([slot, slot]), 0);
        this.whole = true;
      }
      this.syncTimer ??= setTimeout(() => {
        this.syncTimer = null;
        void this.serial(() => this.fsl.fdatasync(this.fd)).catch(() => undefined);
      }, this.syncAfterMs);
      this.syncTimer.unref();
    }).catch(() => undefined);
  }

  /** fdatasync what is pending, then close. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.syncTimer) clearTimeout(this.syncTimer);
    const pending = this.syncTimer !== null;
    this.syncTimer = null;
    await this.chain;
    if (pending) await this.fsl.fdatasync(this.fd).catch(() => undefined);
    await this.fsl.close(this.fd).catch(() => undefined);
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    if (this.closed) return Promise.resolve();
    const next = this.chain.then(fn);
    this.chain = next.catch(() => undefined);
    return next;
  }
}
