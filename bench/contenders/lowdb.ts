// Peer (a): the whole-file rewrite pattern of Cline / Roo Code — one JSON document per run holding
// the whole run state (conversation, every checkpoint, the effect journal), rewritten on every
// checkpoint write. lowdb 7's JSONFile (steno) writes a fixed temp name and renames it without
// fsync; to make it as durable as the others (and fair to them) each write is followed by an
// fsync of the file and of its folder (so the rename is durable too).
import path from 'node:path';
import { Low } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import type { ChatMessage, Effect, SubagentExecutionRecord, ToolExecutionRecord } from '../../src/store/api/schema';
import type { NewRunInput } from '../../src/store/api/types';
import { fsyncPath } from '../fsutil';
import type { Op } from '../workload';
import type { Contender } from './types';

interface StoredCheckpoint {
  seq: number;
  phase: string;
  step: number;
  timestamp_ms: number;
  payload: Record<string, unknown>;
  /** The snapshot minus its lists (the lists are the document's own, as Cline keeps one array). */
  snapshot: Record<string, unknown> | null;
}

interface RunDocument {
  meta: NewRunInput & { created_ms: number };
  messages: ChatMessage[];
  tool_executions: ToolExecutionRecord[];
  subagent_executions: SubagentExecutionRecord[];
  checkpoints: StoredCheckpoint[];
  effects: Effect[];
}

export class LowdbContender implements Contender {
  readonly name = 'lowdb' as const;
  private readonly file: string;
  private db: Low<RunDocument> | undefined;
  private writes = 0;

  constructor(
    readonly dir: string,
    private readonly run: NewRunInput,
    private readonly runStarted: Op,
  ) {
    this.file = path.join(dir, `${run.run_id}.json`);
  }

  async start(): Promise<void> {
    const meta = { ...this.run, created_ms: Date.now() };
    this.db = new Low<RunDocument>(new JSONFile(this.file), {
      meta,
      messages: [],
      tool_executions: [],
      subagent_executions: [],
      checkpoints: [],
      effects: [],
    });
    await this.write();
    await this.apply(this.runStarted);
  }

  async apply(op: Op): Promise<void> {
    if (op.kind === 'barrier' || op.kind === 'model' || op.kind === 'fence') return; // every write below is durable on its own
    const doc = this.db!.data;
    if (op.kind === 'append') {
      const { snapshot, ...rest } = op.input;
      let header: Record<string, unknown> | null = null;
      if (snapshot) {
        const { messages, tool_executions, subagent_executions, ...h } = snapshot;
        doc.messages = messages;
        doc.tool_executions = tool_executions;
        doc.subagent_executions = subagent_executions;
        header = h;
      }
      doc.checkpoints.push({ seq: doc.checkpoints.length + 1, timestamp_ms: Date.now(), ...rest, snapshot: header });
    } else if (op.kind === 'intent') {
      const i = op.intent;
      doc.effects.push({
        ...i,
        run_id: this.run.run_id!,
        idempotency_key: `${this.run.run_id}/${i.step}/${i.tool_call_id}`,
        intent_ms: Date.now(),
        result: null,
      });
    } else {
      const effect = doc.effects.find((e) => e.tool_call_id === op.toolCallId);
      if (!effect) throw new Error(`lowdb contender: no intent for ${op.toolCallId}`);
      effect.result = { ...op.result, finished_ms: Date.now() };
    }
    await this.write();
  }

  async endStep(): Promise<void> {
    // Every write above was durable already.
  }

  async durableWrites(): Promise<number> {
    return this.writes;
  }

  async close(): Promise<void> {
    this.db = undefined;
  }

  async resume(): Promise<{ messages: number; close(): Promise<void> }> {
    const db = new Low<RunDocument | null>(new JSONFile(this.file), null);
    await db.read();
    if (!db.data) throw new Error(`lowdb contender: ${this.file} is empty`);
    return { messages: db.data.messages.length, close: async () => undefined };
  }

  notes(): Record<string, string> {
    return {
      lowdb:
        'Low + JSONFile (steno temp + rename, JSON.stringify(data, null, 2)); + fsync(file) + fsync(dir) after every write',
    };
  }

  /** lowdb's write (serialise everything, temp file, rename), then what it leaves out: fsync. */
  private async write(): Promise<void> {
    await this.db!.write();
    await fsyncPath(this.file);
    await fsyncPath(this.dir);
    this.writes += 1;
  }
}
