// The shared-store contenders, on one PostgreSQL server (each in a database of its own):
//  - ours_pg: the PostgreSQL store (src/store/pg) through the CheckpointStore interface, as the
//    runner calls it; flush() at the end of every step, like ours on disk;
//  - postgres: LangGraph's PostgresSaver storing the same snapshots, mapped as SqliteSaver is
//    (sqlite.ts): a `put` of the full state at each snapshot phase, `putWrites` for the other phases
//    and the effect journal. `put` is given the channels that changed (newVersions), as LangGraph
//    does, so unchanged channels are not stored again — the mapping most favourable to it.
// Bytes per step are the WAL the server wrote during the step (pg_current_wal_insert_lsn before and
// after, read outside the clock): what each makes the server write durably.
import pg from 'pg';
import { type Checkpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type { RuntimeSnapshot } from '../../src/store/api/schema';
import type { CheckpointStore, NewRunInput, RunLease } from '../../src/store/api/types';
import { openPgStore } from '../../src/store/pg/store';
import { applyOp, type Op } from '../workload';
import { BENCH_OWNER } from './ours';
import type { Contender } from './types';

const WORKSPACE = 'bench';

/** Reads the server's WAL position (bytes) on a connection of its own. */
export class WalMeter {
  private constructor(private readonly c: pg.Client) {}
  static async open(url: string): Promise<WalMeter> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    return new WalMeter(c);
  }
  async position(): Promise<number> {
    const r = await this.c.query(`SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint AS b`);
    return Number(r.rows[0].b);
  }
  async tableBytes(schema: string): Promise<number> {
    const r = await this.c.query(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS b FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`,
      [schema],
    );
    return Number(r.rows[0].b);
  }
  /** Commits the run's history has in our store (its durable points). */
  async commits(runId: string): Promise<number> {
    const r = await this.c.query(`SELECT commits FROM agent_waypoints.runs WHERE workspace = $1 AND run_id = $2`, [
      WORKSPACE,
      runId,
    ]);
    return Number(r.rows[0]?.commits ?? 0);
  }
  close(): Promise<void> {
    return this.c.end();
  }
}

abstract class WalCounted {
  protected wal: WalMeter | undefined;
  protected constructor(protected readonly url: string) {}
  /** WAL bytes so far (the measuring loop takes differences around each step). */
  async bytesWritten(): Promise<number> {
    this.wal ??= await WalMeter.open(this.url);
    return this.wal.position();
  }
  protected async closeMeter(): Promise<void> {
    await this.wal?.close();
    this.wal = undefined;
  }
}

export class OursPgContender extends WalCounted implements Contender {
  readonly name = 'ours_pg' as const;
  readonly dir = '';
  private store: CheckpointStore | undefined;
  private lease: RunLease | undefined;

  constructor(
    url: string,
    private readonly run: NewRunInput,
    private readonly runStarted: Op,
  ) {
    super(url);
  }

  async start(): Promise<void> {
    this.store = openPgStore({ connectionString: this.url, workspace: WORKSPACE });
    this.store.onEvent(() => undefined);
    const { lease } = await this.store.createRun(this.run, BENCH_OWNER);
    this.lease = lease;
    await this.apply(this.runStarted);
    await this.store.flush();
  }

  async apply(op: Op): Promise<void> {
    await applyOp(this.store!, this.run.run_id!, op);
  }

  async endStep(): Promise<void> {
    await this.store!.flush();
  }

  async modelWait(): Promise<void> {
    await this.store!.whenIdle(this.run.run_id!);
  }

  /** Committed transactions of the run's history (one per durable point, as on disk). */
  async durableWrites(): Promise<number> {
    this.wal ??= await WalMeter.open(this.url);
    return this.wal.commits(this.run.run_id!);
  }

  async close(): Promise<void> {
    await this.lease?.release();
    await this.store?.close();
    this.store = undefined;
    await this.closeMeter();
  }

  async resume(): Promise<{ messages: number; close(): Promise<void> }> {
    const store = openPgStore({ connectionString: this.url, workspace: WORKSPACE });
    // (as the runner resumes; PostgreSQL keeps no resume points: the run read whole)
    const loaded = await store.loadResumeSnapshot(this.run.run_id!);
    return { messages: loaded.snapshot.messages.length, close: () => store.close() };
  }

  notes(): Record<string, string> {
    return {
      ours_pg:
        'openPgStore through CheckpointStore; one fenced statement per durable point; flush() at the end of every step',
    };
  }
}

type Config = { configurable: { thread_id: string; checkpoint_ns: string; checkpoint_id?: string } };

export class PostgresSaverContender extends WalCounted implements Contender {
  readonly name = 'postgres' as const;
  readonly dir = '';
  private saver: PostgresSaver | undefined;
  private config: Config;
  private version = 0;
  private writes = 0;
  private readonly versions: Record<string, number> = {};
  private previous: Record<string, string> = {};

  constructor(
    url: string,
    private readonly run: NewRunInput,
    private readonly initial: RuntimeSnapshot,
    private readonly runStarted: Op,
  ) {
    super(url);
    this.config = { configurable: { thread_id: run.run_id!, checkpoint_ns: '' } };
  }

  async start(): Promise<void> {
    this.saver = PostgresSaver.fromConnString(this.url);
    await this.saver.setup();
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
    // Every put / putWrites is its own committed transaction.
  }

  async durableWrites(): Promise<number> {
    return this.writes;
  }

  async close(): Promise<void> {
    await this.saver?.end();
    this.saver = undefined;
    await this.closeMeter();
  }

  async resume(): Promise<{ messages: number; close(): Promise<void> }> {
    const saver = PostgresSaver.fromConnString(this.url);
    const close = () => saver.end();
    try {
      const tuple = await saver.getTuple({ configurable: { thread_id: this.run.run_id!, checkpoint_ns: '' } });
      const messages = tuple?.checkpoint.channel_values.messages;
      if (!Array.isArray(messages)) throw new Error('postgres contender: no messages in the latest checkpoint');
      return { messages: messages.length, close };
    } catch (err) {
      await close();
      throw err;
    }
  }

  notes(): Record<string, string> {
    return {
      postgres:
        'LangGraph PostgresSaver: snapshot phases → put(full state, new versions of the channels that changed); other phases and effects → putWrites',
    };
  }

  private async put(snapshot: RuntimeSnapshot, metadata: Record<string, unknown>): Promise<void> {
    this.version += 1;
    const newVersions: Record<string, number> = {};
    const now: Record<string, string> = {};
    for (const [k, v] of Object.entries(snapshot)) {
      // Lists only grow or are replaced: their length (and last item) says whether they changed.
      const sig = Array.isArray(v) ? `${v.length}:${JSON.stringify(v[v.length - 1] ?? null)}` : JSON.stringify(v);
      now[k] = sig;
      if (this.previous[k] !== sig) newVersions[k] = this.versions[k] = this.version;
    }
    this.previous = now;
    const channels = Object.keys(snapshot);
    const checkpoint: Checkpoint = {
      v: 4,
      id: uuid6(-1),
      ts: new Date().toISOString(),
      channel_values: { ...snapshot },
      channel_versions: { ...this.versions },
      versions_seen: { agent: Object.fromEntries(channels.map((c) => [c, this.versions[c] ?? 0])) },
    };
    const parentId = this.config.configurable.checkpoint_id;
    const meta = { ...metadata, parents: parentId ? { '': parentId } : {} };
    this.config = (await this.saver!.put(this.config, checkpoint, meta as never, newVersions)) as Config;
    this.writes += 1;
  }

  private async putWrites(channel: string, value: unknown, taskId: string): Promise<void> {
    await this.saver!.putWrites(this.config, [[channel, value]], taskId);
    this.writes += 1;
  }
}
