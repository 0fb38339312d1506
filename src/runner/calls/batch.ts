// Running one tool batch: the intents that can go ahead are written and made durable with the
// model's response in one barrier, then each call runs in order (call.ts); a batch that stops
// before a call whose intent went ahead starts withdraws that intent, so resume plans it afresh.
import type { Effect } from '../../store/api/schema';
import { errorMessage } from '../errors';
import { CallRunner, intentOf, watchFiles } from './call';
import type { CallPlan } from './plan';
import type { Ahead, CallScope } from './scope';

export type BatchOutcome = { aborted: true } | { aborted: false; failures: number };

export class BatchRunner {
  private readonly call: CallRunner;

  constructor(private readonly s: CallScope) {
    this.call = new CallRunner(s);
  }

  /**
   * Runs (or replays) the batch's calls in order and appends their tool messages. A batch that stops
   * before a call whose intent went ahead starts withdraws that intent. `delegatesFollow`: delegate
   * calls of the same response run after these.
   */
  async run(
    plans: CallPlan[],
    opts: { effects: ReadonlyMap<string, Effect>; delegatesFollow: boolean },
  ): Promise<BatchOutcome> {
    const { effects, delegatesFollow } = opts;
    const ahead = new Map<string, Ahead>();
    let failures = 0;
    try {
      await this.intentsAhead(plans, effects, ahead);
      for (const [i, plan] of plans.entries()) {
        if (this.s.signal.aborted) {
          await this.withdrawAhead(ahead);
          return { aborted: true };
        }
        const more = delegatesFollow || plans.slice(i + 1).some((p) => p.kind === 'run');
        if (!(await this.call.run(plan, { ahead, more }))) failures += 1;
      }
    } catch (err) {
      await this.withdrawAhead(ahead);
      throw err;
    }
    return { aborted: false, failures };
  }

  /**
   * The intents of the batch's side-effecting calls, written ahead and made durable in one barrier
   * with the model's response before any call runs (docs/design.md, "Durable barriers per step").
   * A call's intent goes ahead when what it holds is valid at the batch's start: a command's holds no
   * pre-images (its scan is taken just before it runs), nor does a call of a tool without a file
   * journal; a tool that names its paths gets its pre-images now unless an earlier call of the batch
   * may write them (a command, a tool without a journal, or a call naming one of the same paths) —
   * then its intent is written just before it runs, with its own barrier, as is the intent of a call
   * that already has one (from before an interruption: its first pre-images stand).
   */
  private async intentsAhead(
    plans: CallPlan[],
    effects: ReadonlyMap<string, Effect>,
    ahead: Map<string, Ahead>,
  ): Promise<void> {
    const go: Ahead[] = [];
    let anyWriter = false; // an earlier call of the batch that may write any path
    const named = new Set<string>(); // paths earlier calls of the batch name (lower-cased: conservative)
    for (const plan of plans) {
      if (plan.kind !== 'run' || !plan.tool.sideEffecting) continue;
      const kind = this.s.deps.files ? plan.tool.files?.kind : undefined;
      if (kind !== 'paths') {
        if (!effects.has(plan.call.id)) go.push({ plan });
        anyWriter = true;
        continue;
      }
      if (anyWriter || effects.has(plan.call.id)) continue;
      const watch = await watchFiles(this.s, plan);
      const paths = (watch?.files ?? []).map((f) => f.path.toLowerCase());
      const overlaps = paths.some((p) => named.has(p));
      for (const p of paths) named.add(p);
      if (!overlaps) go.push({ plan, watch });
    }
    if (go.length === 0) return;
    const { store } = this.s.deps;
    for (const a of go) {
      const intent = await store.recordIntent(this.s.runId, intentOf(this.s.rt.step, a.plan, a.watch), {
        durability: 'next-barrier',
      });
      a.files = intent.files;
      ahead.set(a.plan.call.id, a); // recorded: withdrawn if the batch stops before it starts
    }
    await store.makeDurable(this.s.runId, { toolsNext: true });
    this.s.response.carried(); // the barrier carried the response with the intents
  }

  /** Intents written ahead whose calls never started (the batch stopped first): withdrawn, so resume plans them afresh. */
  private async withdrawAhead(ahead: Map<string, Ahead>): Promise<void> {
    for (const id of ahead.keys()) {
      try {
        await this.s.deps.store.withdrawIntent(this.s.runId, id);
      } catch (err) {
        // Left as it is, the intent makes resume ask whether the call ran: never a silent re-run.
        this.s.log('warn', `could not withdraw the intent of ${id}, which never started: ${errorMessage(err)}`);
      }
    }
    ahead.clear();
  }
}
