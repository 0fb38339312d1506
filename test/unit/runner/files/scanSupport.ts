// Shared by the command-scan tests: the two ways the scan runs — without a watcher (every file
// statted before and after a command) and with one (the Node watcher: before a command only what
// it named) — and a helper that waits for the watcher to have reported a path.
import { NodeWatcher } from '../../../../src/runner/fileJournal/nodeWatcher';
import { WorkspaceIndex } from '../../../../src/runner/fileJournal/scanIndex';
import type { WatchEvent, WorkspaceWatcher } from '../../../../src/runner/fileJournal/watcher';

export interface ScanMode {
  name: string;
  /** An index for `root` (undefined: the journal's own, without a watcher). Disposed by disposeIndexes(). */
  index(root: string): WorkspaceIndex | undefined;
}

const open: { dispose(): void }[] = [];

export const SCAN_MODES: readonly ScanMode[] = [
  { name: 'without a watcher', index: () => undefined },
  {
    name: 'with a watcher (an index shared between runs)',
    index: (root) => {
      const watcher = new NodeWatcher(root);
      const index = new WorkspaceIndex({ root, watcher });
      open.push(index, watcher);
      return index;
    },
  },
];

export function disposeIndexes(): void {
  while (open.length) open.pop()!.dispose();
}

/** Resolves with the first event for which `match` is true (rejects after `ms`). */
export function nextEvent(
  watcher: WorkspaceWatcher,
  match: (e: WatchEvent) => boolean,
  ms = 10_000,
): Promise<WatchEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`no matching watcher event within ${ms} ms`));
    }, ms);
    const sub = watcher.onEvent((e) => {
      if (!match(e)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(e);
    });
  });
}
