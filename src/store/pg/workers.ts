// The workers seen from a client (a VS Code window, the command line): hand a run to them, bring it
// back, decide a call of a run a worker drives, and follow it all live. A small typed surface over
// the hand-off rows (handoffs.ts) and the change feed (listen.ts) of one project on the shared store.
import type { DecidedBy } from '../api/schema';
import type { Disposable } from '../api/types';
import type { PgStore } from './store';
import type { DecisionBody, HandOff, PostedDecision } from './handoffs';
import { waitUntil, type SharedChange } from './listen';

export type { DecisionBody, HandOff, PostedDecision, SharedChange };

export class SharedWorkers {
  constructor(private readonly store: PgStore) {}

  private get engine() {
    return this.store.engine;
  }

  /** How often a wait looks again without a notification (a lease that went stale by time alone). */
  private get recheckMs(): number {
    return Math.max(200, this.engine.o.lease.heartbeatMs);
  }

  /**
   * Hands the run to the workers. The window driving it must let go at its next step boundary
   * (AgentRunner.letGo); a worker with a checkout of this project takes it then.
   */
  handOff(runId: string, by: DecidedBy): Promise<HandOff> {
    return this.engine.handoffs.handOff(runId, by);
  }

  /**
   * Takes the run back from the workers: the one driving it lets go at its next step boundary (a
   * call under way finishes first); resolves once nobody holds it and the hand-off has ended. The
   * caller then resumes it (AgentRunner.resume) — until then no worker takes it.
   */
  async bringBack(runId: string, to: DecidedBy, o: { timeoutMs?: number } = {}): Promise<void> {
    await this.engine.handoffs.bringBack(runId, to);
    await waitUntil(
      this.engine.changes(),
      { runId, recheckMs: this.recheckMs, timeoutMs: o.timeoutMs ?? 300_000, what: `the worker to let go of ${runId}` },
      async () => ((await this.store.owner(runId)) ? undefined : true),
    );
    await this.engine.handoffs.end(runId);
  }

  get(runId: string): Promise<HandOff | undefined> {
    return this.engine.handoffs.get(runId);
  }

  /** This project's runs handed to the workers, with who holds each now. */
  list(): Promise<HandOff[]> {
    return this.engine.handoffs.list();
  }

  /**
   * A decision on a call of a run this client does not hold (a worker drives it, or will): durable
   * when it resolves, bound to the call and the hash of the arguments shown. The worker records it in
   * the run (or refuses it, saying why: e.g. the arguments changed) — `settled` waits for that.
   */
  decide(
    runId: string,
    call: { toolCallId: string; inputHash: string },
    decision: DecisionBody,
    by: DecidedBy,
  ): Promise<PostedDecision> {
    return this.engine.handoffs.postDecision(runId, call, decision, by);
  }

  /** The decision once the run's owner settled it (recorded or refused). Rejects after `timeoutMs`. */
  settled(posted: PostedDecision, timeoutMs: number): Promise<PostedDecision> {
    return waitUntil(
      this.engine.changes(),
      { runId: posted.runId, recheckMs: this.recheckMs, timeoutMs, what: `a worker to take decision ${posted.id}` },
      async () => {
        const d = await this.engine.handoffs.decision(posted.id);
        return d?.outcome ? d : undefined;
      },
    );
  }

  /**
   * Pushes this project's changes — new records of a run, leases taken and given back, hand-offs,
   * decisions — as they commit, until disposed. `resync`: the feed reconnected; look at everything again.
   */
  watch(listener: (c: SharedChange) => void): Disposable {
    return this.engine.watch(listener);
  }

  /** Resolves once the feed is listening (what commits after it is pushed). */
  watching(): Promise<void> {
    return this.engine.changes().ready();
  }
}
