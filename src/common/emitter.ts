// The one typed event emitter of the project (runner events, store events, view models).
// Listener errors are isolated: one bad subscriber cannot stop a run or a write.
import type { Disposable } from './disposable';

export type Listener<T> = (event: T) => void;

export class Emitter<T> {
  private readonly listeners = new Set<Listener<T>>();

  on(listener: Listener<T>): Disposable {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  emit(event: T): void {
    for (const l of [...this.listeners]) {
      try {
        l(event);
      } catch {
        /* a subscriber's bug must not break the emitter's owner */
      }
    }
  }

  get size(): number {
    return this.listeners.size;
  }

  dispose(): void {
    this.listeners.clear();
  }
}
