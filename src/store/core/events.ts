// The store's listeners and the corruption reports it has said (once per file): shared by the
// parts of the store (context.ts), apart so the loader can take them without importing the context.
import type * as T from '../api/types';

/** Listeners, and corruption reports said once per file. */
export class StoreEvents {
  private readonly listeners = new Set<(e: T.StoreEvent) => void>();
  private readonly reportedFiles = new Set<string>();
  /** Corruption found while opening (also emitted). */
  readonly openReports: T.CorruptionReport[] = [];
  opening = false;

  constructor(onEvent?: (e: T.StoreEvent) => void) {
    if (onEvent) this.listeners.add(onEvent);
  }

  on(listener: (e: T.StoreEvent) => void): T.Disposable {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  /** Whether anyone listens: events that carry copies are not built for nobody. */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  emit(e: T.StoreEvent): void {
    for (const l of [...this.listeners]) {
      try {
        l(e);
      } catch {
        // a listener's bug must not break a write
      }
    }
  }

  report(r: T.CorruptionReport): void {
    if (r.quarantined.length === 0 && this.reportedFiles.has(r.file)) return; // the same unmoved file, read again
    this.reportedFiles.add(r.file);
    if (this.opening) this.openReports.push(r);
    this.emit({ kind: 'corruption', report: r });
  }
}
