// Peer (b): LangGraph's SqliteSaver storing the same snapshots as LangGraph checkpoints. A
// LangGraph checkpoint carries the full state (channel_values), so every snapshot-bearing phase
// (step_started, post_llm) is a `put` of the whole snapshot — lists included. The phases without
// a snapshot and the effect journal are small records attached to the current checkpoint with
// `putWrites` (LangGraph's "pending writes"), which is the most favourable mapping for the peer:
// it pays the full state twice per step, not at every phase. The saver sets journal_mode=WAL;
// better-sqlite3 builds SQLite with WAL synchronous=NORMAL, which is not durable per commit, so
// we set PRAGMA synchronous=FULL (an fsync of the WAL at every commit).
import path from 'node:path';
import { type Checkpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import type { RuntimeSnapshot } from '../../src/store/api/schema';
import type { NewRunInput } from '../../src/store/api/types';
import type { Op } from '../workload';
import type { Contender } from './types';

type Config = { configurable: { thread_id: string; checkpoint_ns: string; checkpoint_id?: string } };

export class SqliteContender implements Contender {
  readonly name = 'sqlite' as const;
  private readonly file: string;
  private saver: SqliteSaver | undefined;
  private config: Config;
  private version = 0;
  private writes = 0;
  private readonly facts: Record<string, string> = {};

  constructor(
    readonly dir: string,
    private readonly run: NewRunInput,
    private readonly initial: RuntimeSnapshot,
    private readonly runStarted: Op,
  ) {
    this.file = path.join(dir, 'checkpoints.sqlite');
    this.config = { configurable: { thread_id: run.run_id!, checkpoint_ns: '' } };
  }

  async start(): Promise<void> {
    const saver = SqliteSaver.fromConnString(this.file);
    await saver.getTuple(this.config); // runs the saver's own setup(): tables + journal_mode=WAL
    this.facts.synchronous_as_set_by_saver = String(saver.db.pragma('synchronous', { simple: true }));
    saver.db.pragma('synchronous = FULL');
    this.facts.journal_mode = String(saver.db.pragma('journal_mode', { simple: true }));
    this.facts.synchronous = String(saver.db.pragma('synchronous', { simple: true }));
    this.facts.wal_autocheckpoint = String(saver.db.pragma('wal_autocheckpoint', { simple: true }));
    this.facts.page_size = String(saver.db.pragma('page_size', { simple: true }));
    this.saver = saver;
    // LangGraph starts a thread with an "input" checkpoint holding the input state.
    await this.put(this.initial, { source: 'input', step: -1, parents: {}, phase: 'input' });
    await this.apply(this.runStarted);
  }

  async apply(op: Op): Promise<void> {
    if (op.kind === 'barrier' || op.kind === 'model' || op.kind === 'fence') return; // every write below is durable on its own
    if (op.kind === 'append' && op.input.snapshot) {
      const { snapshot, ...record } = op.input;
      await this.put(snapshot, {
        source: 'loop',
        step: record.step,
        parents: {},
        phase: record.phase,
        payload: record.payload,
      });
    } else if (op.kind === 'append') {
      const { phase, step, payload } = op.input;
      await this.putWrites(`phase:${phase}`, { phase, step, payload, timestamp_ms: Date.now() }, `${phase}:${step}`);
    } else if (op.kind === 'intent') {
      const i = op.intent;
      const effect = { ...i, idempotency_key: `${this.run.run_id}/${i.step}/${i.tool_call_id}`, intent_ms: Date.now() };
      await this.putWrites('effect_intent', effect, `${i.tool_call_id}:intent`);
    } else {
      await this.putWrites(
        'effect_result',
        { tool_call_id: op.toolCallId, ...op.result, finished_ms: Date.now() },
        `${op.toolCallId}:result`,
      );
    }
  }

  async endStep(): Promise<void> {
    // Every put / putWrites is its own durable transaction.
  }

  async durableWrites(): Promise<number> {
    return this.writes;
  }

  async close(): Promise<void> {
    this.saver?.db.close();
    this.saver = undefined;
  }

  async resume(): Promise<{ messages: number; close(): Promise<void> }> {
    const saver = SqliteSaver.fromConnString(this.file);
    const close = async () => void saver.db.close();
    try {
      const tuple = await saver.getTuple({ configurable: { thread_id: this.run.run_id!, checkpoint_ns: '' } });
      const messages = tuple?.checkpoint.channel_values.messages;
      if (!Array.isArray(messages)) throw new Error('sqlite contender: no messages in the latest checkpoint');
      return { messages: messages.length, close };
    } catch (err) {
      await close();
      throw err;
    }
  }

  notes(): Record<string, string> {
    return { ...this.facts, mapping: 'snapshot phases → put(full state); other phases and effects → putWrites' };
  }

  private async put(snapshot: RuntimeSnapshot, metadata: Record<string, unknown>): Promise<void> {
    this.version += 1;
    const channels = Object.keys(snapshot);
    const checkpoint: Checkpoint = {
      v: 4,
      id: uuid6(-1),
      ts: new Date().toISOString(),
      channel_values: { ...snapshot },
      channel_versions: Object.fromEntries(channels.map((c) => [c, this.version])),
      versions_seen: { agent: Object.fromEntries(channels.map((c) => [c, this.version - 1])) },
    };
    const parentId = this.config.configurable.checkpoint_id;
    const meta = { ...metadata, parents: parentId ? { '': parentId } : {} };
    this.config = (await this.saver!.put(this.config, checkpoint, meta as never)) as Config;
    this.writes += 1;
  }

  private async putWrites(channel: string, value: unknown, taskId: string): Promise<void> {
    await this.saver!.putWrites(this.config, [[channel, value]], taskId);
    this.writes += 1;
  }
}
