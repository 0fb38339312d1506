// A long loop on the host's main thread gives the event loop a turn every few milliseconds, so one
// large input never holds up timers, I/O or the views' messages: processing work that is already
// there (a stream's buffered events, a long text) runs as microtasks, which never yield by themselves.

/** Work between two turns of the event loop, ms. */
export const TURN_MS = 8;

export class Breather {
  private since = performance.now();

  /** Whether the loop has had the thread for TURN_MS: a hot loop asks before it awaits `tick()`. */
  get due(): boolean {
    return performance.now() - this.since >= TURN_MS;
  }

  /** At once while less than TURN_MS has passed since the last turn; else after one turn of the event loop. */
  async tick(): Promise<void> {
    if (performance.now() - this.since < TURN_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}
