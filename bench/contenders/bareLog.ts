// The floor, not a peer: a log with exactly ours' durable barriers and the least work a durable
// checkpoint log can do around them — what ours would cost with none of its own features. Per op a
// copy of what is new (the snapshot header, list items past those already handed over, the effect:
// fresh objects, strings shared, as ours copies), appended to a queue; per barrier one JSON frame
// (length, crc32, text) in which a tool message's content is a reference when its call's result holds
// it (as ours writes it once), the lock's stat, a pwrite into room written ahead, an fdatasync on
// libuv's pool and a witness slot rewritten in place — the disk work ours does. No validation, no
// encoding against the log, no short keys, no run in memory, no index, no copy handed back: never
// more work than ours in any part. Its per-step time ÷ three raw appends says how far the goal can be
// reached on this machine at all (bench/README.md). It is never resumed.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { NewRunInput } from '../../src/store/api/types';
import type { Op } from '../workload';
import type { Contender } from './types';

/** Room written ahead of the appends (zeros, synced off the clock), as ours' segment has. */
const ROOM = 32 * 1024 * 1024;
const WITNESS_SLOT = 128;
const LIST_FIELDS = new Set(['messages', 'tool_executions', 'subagent_executions']);

/** Fresh objects and arrays, the (immutable) strings shared: the least a store that keeps what it is handed can copy. */
function copy<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(copy) as T;
  const out: Record<string, unknown> = {};
  for (const k in v) out[k] = copy((v as Record<string, unknown>)[k]);
  return out as T;
}

export class BareLogContender implements Contender {
  readonly name = 'bare' as const;
  private fd: number | null = null;
  private end = WITNESS_SLOT;
  private allocated = 0;
  private queue: unknown[] = [];
  private owed = false;
  private commits = 0;
  /** The outputs of calls whose results were written: a tool message with the same content refers to them. */
  private readonly outputs = new Map<string, string>();
  private syncs = 0;
  private bytes = 0;
  /** List items handed over so far, per list: a snapshot's tail is what lies past them. */
  private readonly lengths: Record<string, number> = { messages: 0, tool_executions: 0, subagent_executions: 0 };
  private readonly lock: string;
  private readonly file: string;

  constructor(
    readonly dir: string,
    private readonly run: NewRunInput,
    private readonly runStarted: Op,
  ) {
    this.lock = path.join(dir, 'owner.lock');
    this.file = path.join(dir, 'log');
  }

  async start(): Promise<void> {
    fs.mkdirSync(this.dir, { recursive: true });
    fs.writeFileSync(this.lock, JSON.stringify({ owner: 'bench', run: this.run.run_id }));
    this.fd = fs.openSync(this.file, 'w+');
    this.reserve();
    this.queue.push(copy(this.run));
    await this.apply(this.runStarted);
  }

  /** Zeros past the end, synced (ours writes its room off the step's path too). */
  private reserve(): void {
    const zeros = Buffer.alloc(ROOM);
    fs.writeSync(this.fd!, zeros, 0, ROOM, this.allocated);
    fs.fdatasyncSync(this.fd!);
    this.allocated += ROOM;
  }

  async apply(op: Op): Promise<void> {
    if (op.kind === 'model' || op.kind === 'fence') return; // one process, no lease to prove
    if (op.kind === 'barrier') {
      if (this.owed) await this.barrier();
      return;
    }
    const later = op.durability === 'next-barrier';
    if (op.kind === 'append') {
      const { snapshot, ...rest } = op.input;
      const rec = copy(rest) as Record<string, unknown>;
      rec.timestamp_ms = Date.now();
      if (snapshot) {
        const s = snapshot as unknown as Record<string, unknown>;
        const header: Record<string, unknown> = {};
        const tails: Record<string, unknown> = {};
        for (const k of Object.keys(s)) {
          if (!LIST_FIELDS.has(k)) {
            header[k] = copy(s[k]);
            continue;
          }
          const list = s[k] as unknown[];
          tails[k] = { base: this.lengths[k], items: list.slice(this.lengths[k]).map((x) => this.item(x)) };
          this.lengths[k] = list.length;
        }
        rec.snapshot = header;
        rec.lists = tails;
      }
      this.queue.push(rec);
      const durable =
        op.input.phase === 'run_started' ||
        op.input.phase === 'run_terminal' ||
        op.input.phase === 'post_condense' ||
        (op.input.phase === 'post_llm' && op.input.snapshot?.pending_llm_response != null);
      if (durable && !later) return this.barrier();
      if (later) this.owed = true;
      return;
    }
    if (op.kind === 'result') this.outputs.set(op.toolCallId, op.result.output);
    this.queue.push(copy(op.kind === 'intent' ? op.intent : { result: op.result, of: op.toolCallId }));
    if (op.durability === 'written') this.writeQueued();
    if (later || op.durability === 'written') this.owed = true;
    else await this.barrier();
  }

  /** A list item's copy; a tool message's content as a reference to its call's result when that holds it. */
  private item(x: unknown): unknown {
    const m = x as { role?: unknown; tool_call_id?: unknown; content?: unknown };
    if (m.role === 'tool' && typeof m.tool_call_id === 'string' && this.outputs.get(m.tool_call_id) === m.content)
      return { role: 'tool', tool_call_id: m.tool_call_id, content: { $output: m.tool_call_id } };
    return copy(x);
  }

  /** What is queued as one frame, written without a sync (ours: a write-behind commit). */
  private writeQueued(): void {
    const text = JSON.stringify({ n: ++this.commits, ops: this.queue });
    this.queue = [];
    const body = Buffer.from(text, 'latin1');
    const head = Buffer.from(`${body.length}\t${zlib.crc32(body).toString(16).padStart(8, '0')}\t`, 'latin1');
    const frame = Buffer.concat([head, body, Buffer.from('\n')]);
    fs.statSync(this.lock); // ours checks its lock before every commit
    fs.writeSync(this.fd!, frame, 0, frame.length, this.end);
    this.end += frame.length;
    this.bytes += frame.length;
  }

  private async barrier(): Promise<void> {
    if (this.queue.length > 0) this.writeQueued();
    this.owed = false;
    const synced = new Promise<void>((resolve, reject) =>
      fs.fdatasync(this.fd!, (err) => (err ? reject(err) : resolve())),
    );
    // The witness slot built while the barrier syncs, written after it (as ours: RunLog.prepareWitness).
    const w = JSON.stringify({ commits: this.commits, end: this.end });
    const slot = Buffer.from(
      `${w.padEnd(WITNESS_SLOT - 10)} ${zlib.crc32(Buffer.from(w)).toString(16).padStart(8, '0')}\n`,
      'latin1',
    );
    await synced;
    this.syncs++;
    fs.writeSync(this.fd!, slot, 0, slot.length, 0);
    this.bytes += slot.length;
  }

  async endStep(): Promise<void> {
    // Nothing: like ours, what a step queued rides on the next step's first barrier.
  }

  async modelWait(): Promise<void> {
    if (this.allocated - this.end < ROOM / 4) this.reserve(); // off the clock, as ours' upkeep
  }

  bytesWritten(): number {
    return this.bytes;
  }

  async durableWrites(): Promise<number> {
    return this.syncs;
  }

  barriersNow(): number {
    return this.syncs;
  }

  async close(): Promise<void> {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  resume(): Promise<never> {
    return Promise.reject(new Error('the bare log is a floor for the step path: it is never resumed'));
  }

  notes(): Record<string, string> {
    return {
      bare: "the floor, not a peer: ours' barriers with a copy of what is new (strings shared), one JSON frame per barrier (tool outputs once), the lock's stat, pwrite into room, fdatasync on the pool and a witness slot; no validation, encoding, model, index or copy handed back",
    };
  }
}
