// A running run's inbox: messages the user sends while the agent works. Each is durable when
// post() resolves and enters the conversation at the next step boundary (the store marks it
// delivered in the same commit as that step's first checkpoint). A run never finishes with a
// message waiting: if one arrived while the model wrote its final answer, the run takes another step.
import type { InboxMessage } from '../store/api/schema';
import type { CheckpointStore, NewInboxMessage } from '../store/api/types';

export class RunInbox {
  private readonly inFlight = new Set<Promise<unknown>>();
  private closing = false;

  constructor(
    private readonly store: CheckpointStore,
    private readonly runId: string,
  ) {}

  /** False once the run has decided to finish: a message sent then starts a follow-up turn instead. */
  get open(): boolean {
    return !this.closing;
  }

  post(message: NewInboxMessage): Promise<InboxMessage> {
    const p = this.store.postMessage(this.runId, message);
    this.inFlight.add(p);
    const done = () => void this.inFlight.delete(p);
    p.then(done, done);
    return p;
  }

  /** The messages to deliver now (at a step boundary), in the order sent. */
  waiting(): Promise<InboxMessage[]> {
    return this.store.listInbox(this.runId, { pendingOnly: true });
  }

  /**
   * Called when the model gave its final answer: closes the inbox, waits for sends already under
   * way, and reopens it when a message is waiting (the run then goes on to deliver it).
   */
  async holdsMessagesBeforeFinishing(): Promise<boolean> {
    this.closing = true;
    await Promise.allSettled([...this.inFlight]);
    const waiting = await this.waiting();
    if (waiting.length > 0) this.closing = false;
    return waiting.length > 0;
  }
}
