// Runs handed to the workers, and decisions posted by clients that do not hold a run. Both are rows
// beside the run's (schema version 2); the run's history stays where it is, written only under its
// lease. A worker claims with PostgreSQL's own primitives — `FOR UPDATE SKIP LOCKED` among the
// handed-off runs nobody live holds — and then takes the run's ordinary fenced lease: the claim only
// keeps two idle workers from reaching for the same run at once; the lease is what makes one owner.
// Every change here is pushed on the schema's channel by a trigger (listen.ts).
import type pg from 'pg';
import { z } from 'zod';
import { CheckpointNotFoundError, InvalidInputError } from '../api/errors';
import { DecidedBy, SandboxAccess } from '../api/schema';
import type { OwnerInfo } from '../api/types';
import { live } from './lease';

export type HandOffStatus =
  /** A worker may take it now. */
  | 'ready'
  /** It waits for a decision: a worker takes it when one is posted. */
  | 'waiting'
  /** It stopped (finished, failed, paused on an error or its budget): handed off again to go on. */
  | 'stopped';

export interface HandOff {
  runId: string;
  workspace: string;
  handedBy: DecidedBy;
  handedMs: number;
  status: HandOffStatus;
  /** Why it is waiting or stopped, as the worker said it. */
  detail: string | null;
  /** Who asked for it back (the worker lets go at its next step boundary), or null. */
  wantedBack: DecidedBy | null;
  /** Who holds the run now (a worker while it drives it), or null. */
  holder: OwnerInfo | null;
}

/** A decision on a waiting call, as a client that does not hold the run posts it. */
export const DecisionBody = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('approve'), access: SandboxAccess.optional() }),
  z.object({ kind: z.literal('reject'), reason: z.string().max(10_000) }),
  z.object({ kind: z.literal('approve_edited'), argumentsJson: z.string().max(1_000_000) }),
]);
export type DecisionBody = z.infer<typeof DecisionBody>;

const Posted = z.object({ decision: DecisionBody, by: DecidedBy });

export interface PostedDecision {
  id: string;
  runId: string;
  toolCallId: string;
  /** The hash of the arguments the client was shown: a decision for other arguments is refused. */
  inputHash: string;
  decision: DecisionBody;
  by: DecidedBy;
  postedMs: number;
  /** null until the run's owner settled it: `recorded` in the run, or `refused` (outcomeDetail says why). */
  outcome: 'recorded' | 'refused' | null;
  outcomeDetail: string | null;
}

interface Db {
  q<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>>;
}

interface HandOffRow {
  run_id: string;
  workspace: string;
  handed_by: string;
  handed_ms: string;
  status: HandOffStatus;
  detail: string | null;
  wanted_back: string | null;
  owner: string | null;
  live: boolean;
}

interface DecisionRow {
  id: string;
  run_id: string;
  tool_call_id: string;
  input_hash: string;
  body: string;
  posted_ms: string;
  outcome: 'recorded' | 'refused' | null;
  outcome_detail: string | null;
}

/** The hand-offs and posted decisions of one workspace identity (the project). */
export class HandOffs {
  constructor(
    private readonly db: Db,
    /** The quoted schema name. */
    private readonly S: string,
    readonly workspace: string,
    private readonly staleMs: number,
  ) {}

  /**
   * Hands the run to the workers (again): ready for any worker with a checkout of this project. The
   * window holding it lets go at its next step boundary (AgentRunner.letGo); a worker takes it then.
   */
  async handOff(runId: string, by: DecidedBy): Promise<HandOff> {
    const r = await this.db.q(
      `INSERT INTO ${this.S}.handoffs (rid, workspace, run_id, handed_by)
       SELECT rid, workspace, run_id, $3 FROM ${this.S}.runs WHERE workspace = $1 AND run_id = $2
       ON CONFLICT (rid) DO UPDATE SET handed_by = EXCLUDED.handed_by, handed_at = now(), status = 'ready',
         detail = NULL, wanted_back = NULL, wanted_at = NULL`,
      [this.workspace, runId, JSON.stringify(DecidedBy.parse(by))],
    );
    if (r.rowCount === 0) throw new CheckpointNotFoundError(`Run ${runId} is not in the shared store.`, runId);
    return (await this.get(runId))!;
  }

  /**
   * Asks for the run back: no worker takes it from now on, and the one driving it lets go at its
   * next step boundary. The caller waits until nobody holds it (SharedListener.untilFree), acquires
   * it, and ends the hand-off (`end`).
   */
  async bringBack(runId: string, to: DecidedBy): Promise<HandOff> {
    const r = await this.db.q(
      `UPDATE ${this.S}.handoffs SET wanted_back = $3, wanted_at = now() WHERE workspace = $1 AND run_id = $2`,
      [this.workspace, runId, JSON.stringify(DecidedBy.parse(to))],
    );
    if (r.rowCount === 0) throw new InvalidInputError(`Run ${runId} is not handed to the workers.`);
    return (await this.get(runId))!;
  }

  /** The run is no longer the workers' (brought back, or deleted). */
  async end(runId: string): Promise<void> {
    await this.db.q(`DELETE FROM ${this.S}.handoffs WHERE workspace = $1 AND run_id = $2`, [this.workspace, runId]);
  }

  async get(runId: string): Promise<HandOff | undefined> {
    return (await this.select(`AND h.run_id = $3`, [runId]))[0];
  }

  /** Every run of this project handed to the workers, newest hand-off first. */
  list(): Promise<HandOff[]> {
    return this.select('', []);
  }

  private async select(where: string, extra: unknown[]): Promise<HandOff[]> {
    const r = await this.db.q<HandOffRow>(
      `SELECT h.run_id, h.workspace, h.handed_by, (extract(epoch FROM h.handed_at) * 1000)::bigint AS handed_ms,
         h.status, h.detail, h.wanted_back, r.lease_owner AS owner, ${live('$2')} AS live
       FROM ${this.S}.handoffs h JOIN ${this.S}.runs r ON r.rid = h.rid
       WHERE h.workspace = $1 ${where} ORDER BY h.handed_at DESC`,
      [this.workspace, this.staleMs / 1000, ...extra],
    );
    return r.rows.map((x) => ({
      runId: x.run_id,
      workspace: x.workspace,
      handedBy: DecidedBy.parse(JSON.parse(x.handed_by)),
      handedMs: Number(x.handed_ms),
      status: x.status,
      detail: x.detail,
      wantedBack: x.wanted_back ? DecidedBy.parse(JSON.parse(x.wanted_back)) : null,
      holder: x.live && x.owner ? (JSON.parse(x.owner) as OwnerInfo) : null,
    }));
  }

  /**
   * The worker driving it says where it stopped. Fenced: only while `token` is still the run's lease,
   * so a worker that was taken over never parks a run its successor drives.
   */
  async setStatus(runId: string, token: string, status: HandOffStatus, detail: string | null): Promise<boolean> {
    const r = await this.db.q(
      `UPDATE ${this.S}.handoffs h SET status = $4, detail = $5, status_token = r.lease_token FROM ${this.S}.runs r
       WHERE r.rid = h.rid AND h.workspace = $1 AND h.run_id = $2 AND r.lease_token = $3`,
      [this.workspace, runId, token, status, detail],
    );
    return r.rowCount === 1;
  }

  /**
   * A decision from a client that does not hold the run, bound to the call and the hash of the
   * arguments it was shown. Durable when it resolves; the owner records it in the run (or refuses it,
   * saying why) — wait for that with SharedListener.untilSettled.
   */
  async postDecision(
    runId: string,
    call: { toolCallId: string; inputHash: string },
    decision: DecisionBody,
    by: DecidedBy,
  ): Promise<PostedDecision> {
    const body = JSON.stringify(Posted.parse({ decision, by }));
    const r = await this.db.q<{ id: string }>(
      `INSERT INTO ${this.S}.decisions (rid, workspace, run_id, tool_call_id, input_hash, body)
       SELECT rid, workspace, run_id, $3, $4, $5 FROM ${this.S}.runs WHERE workspace = $1 AND run_id = $2
       RETURNING id`,
      [this.workspace, runId, call.toolCallId, call.inputHash, body],
    );
    const id = r.rows[0]?.id;
    if (!id) throw new CheckpointNotFoundError(`Run ${runId} is not in the shared store.`, runId);
    return (await this.decision(id))!;
  }

  async decision(id: string): Promise<PostedDecision | undefined> {
    return (await this.decisions(`AND id = $2`, [id]))[0];
  }

  /** The run's decisions nobody has settled yet, in the order posted. */
  openDecisions(runId: string): Promise<PostedDecision[]> {
    return this.decisions(`AND run_id = $2 AND outcome IS NULL`, [runId]);
  }

  private async decisions(where: string, extra: unknown[]): Promise<PostedDecision[]> {
    const r = await this.db.q<DecisionRow>(
      `SELECT id, run_id, tool_call_id, input_hash, body, (extract(epoch FROM posted_at) * 1000)::bigint AS posted_ms,
         outcome, outcome_detail FROM ${this.S}.decisions WHERE workspace = $1 ${where} ORDER BY id`,
      [this.workspace, ...extra],
    );
    return r.rows.map((x) => {
      const p = Posted.parse(JSON.parse(x.body));
      return {
        id: String(x.id),
        runId: x.run_id,
        toolCallId: x.tool_call_id,
        inputHash: x.input_hash,
        decision: p.decision,
        by: p.by,
        postedMs: Number(x.posted_ms),
        outcome: x.outcome,
        outcomeDetail: x.outcome_detail,
      };
    });
  }

  /** The owner's verdict on a posted decision (once: a settled decision stays as it was settled). */
  async settle(id: string, outcome: 'recorded' | 'refused', detail: string | null): Promise<void> {
    await this.db.q(
      `UPDATE ${this.S}.decisions SET outcome = $3, outcome_detail = $4, settled_at = now()
       WHERE workspace = $1 AND id = $2 AND outcome IS NULL`,
      [this.workspace, id, outcome, detail],
    );
  }
}

/**
 * Claims one handed-off run of these projects that a worker should take now — ready, or waiting
 * with a decision posted (or no longer waiting by its own summary) — whose lease is free or stale, and runs `take` (which takes the run's
 * lease) while its row is locked: another worker's claim skips it (SKIP LOCKED) and reaches for
 * another run instead of contending for this one. Nothing to claim → undefined. The lease decides
 * who owns the run; the row lock only spreads idle workers over runs.
 */
export async function claimHandedOff<T>(
  pool: pg.Pool,
  S: string,
  o: { workspaces: readonly string[]; staleMs: number; skip?: readonly string[] },
  take: (claimed: { workspace: string; runId: string }) => Promise<T>,
): Promise<T | undefined> {
  const c = await pool.connect();
  let broken: Error | undefined;
  try {
    await c.query('BEGIN');
    const r = await c.query<{ workspace: string; run_id: string }>(
      `SELECT h.workspace, h.run_id FROM ${S}.handoffs h JOIN ${S}.runs r ON r.rid = h.rid
       WHERE h.workspace = ANY($1::text[]) AND h.wanted_back IS NULL AND NOT (h.run_id = ANY($3::text[]))
         AND (h.status = 'ready' OR (h.status = 'waiting'
           AND (EXISTS (SELECT 1 FROM ${S}.decisions d WHERE d.rid = h.rid AND d.outcome IS NULL)
             -- parked, yet taken since by an owner that never said where it stopped, or its summary
             -- says it is not waiting for anyone: a worker died between its last decision and its
             -- next status; taken again rather than left for a decision nobody is asked for
             OR r.lease_token <> h.status_token
             OR r.summary NOT LIKE '%"state":"awaiting_approval"%')))
         AND NOT ${live('$2')}
       ORDER BY h.handed_at LIMIT 1 FOR UPDATE OF h SKIP LOCKED`,
      [o.workspaces, o.staleMs / 1000, o.skip ?? []],
    );
    const row = r.rows[0];
    const out = row ? await take({ workspace: row.workspace, runId: row.run_id }) : undefined;
    // Taken is taken: a failed COMMIT only drops the row lock, which the broken connection drops anyway.
    await c.query('COMMIT').catch((e: Error) => (broken = e));
    return out;
  } catch (err) {
    await c.query('ROLLBACK').catch((e: Error) => (broken = e));
    throw err;
  } finally {
    c.release(broken);
  }
}
