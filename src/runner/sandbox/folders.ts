// The workspace's folders as the layout reads them, each read once and kept while the folder is
// provably unchanged: the same device and inode, the same modification and change times (to the
// nanosecond). Any entry added, removed or renamed in a folder moves its change time, which no
// program can set back (`touch -d` moves it too). A timestamp has the clock's coarse resolution,
// so two changes a few milliseconds apart can share one: a folder changed less than SETTLED_MS
// before it was read is read again every time, never answered from what was kept. The margin
// assumes the folder's timestamps come from this machine's clock (a network file system whose
// server runs more than that behind could be answered from a stale listing).
// Reads are synchronous in slices: a thread-pool round trip per folder costs more than the read
// itself, and yielding between slices keeps the event loop free on a large workspace.
import fs, { type Dirent } from 'node:fs';
import path from 'node:path';

export const SETTLED_MS = 2_000;
/** Longest stretch of synchronous reads before the walk lets the event loop run. */
const SLICE_MS = 8;
/** Workspaces whose folders are kept (the most recently mapped ones). */
const KEPT_WORKSPACES = 8;

interface Kept<T> {
  id: string;
  value: T;
}

/** One workspace's folders, read with one interpretation of their entries (`classify`). */
export interface FolderSnapshot<T> {
  /** Identity of the interpretation: a listing kept under another one is never reused. */
  key: readonly unknown[];
  folders: Map<string, Kept<T>>;
}

const snapshots = new Map<string, FolderSnapshot<unknown>>();

export interface FolderReader<T> {
  /** What `rel` holds, interpreted by `classify`; null when it is not a folder that can be read. */
  read(rel: string): T | null;
  /** Folders read from disk (not answered from what was kept) so far. */
  readonly listed: number;
  /** Lets the event loop run when this slice has taken long enough. */
  pause(): Promise<void>;
  /** Keeps what this walk read for the next one (only the folders it visited). */
  keep(): void;
}

export function folderReader<T>(
  root: string,
  key: readonly unknown[],
  classify: (rel: string, entries: Dirent[]) => T,
  now: () => number = Date.now,
): FolderReader<T> {
  const before = snapshots.get(root) as FolderSnapshot<T> | undefined;
  const usable = before && sameKey(before.key, key) ? before.folders : null;
  const folders = new Map<string, Kept<T>>();
  let listed = 0;
  let slice = performance.now();
  return {
    get listed() {
      return listed;
    },
    read(rel) {
      const abs = rel === '' ? root : path.join(root, rel);
      const startedAt = now();
      let st: fs.BigIntStats;
      try {
        st = fs.lstatSync(abs, { bigint: true });
      } catch {
        return null; // gone: nothing in it can be written through the sandbox either
      }
      if (!st.isDirectory()) return null;
      const id = `${st.dev}:${st.ino}:${st.mtimeNs}:${st.ctimeNs}`;
      const hit = usable?.get(rel);
      if (hit && hit.id === id) {
        folders.set(rel, hit);
        return hit.value;
      }
      let entries: Dirent[];
      try {
        entries = fs.readdirSync(abs, { withFileTypes: true });
      } catch {
        return null; // unreadable: nothing in it can be written through the sandbox either
      }
      listed++;
      const value = classify(rel, entries);
      if (settled(st, startedAt)) folders.set(rel, { id, value });
      return value;
    },
    async pause() {
      if (performance.now() - slice < SLICE_MS) return;
      await new Promise<void>((resolve) => setImmediate(resolve));
      slice = performance.now();
    },
    keep() {
      snapshots.delete(root);
      snapshots.set(root, { key, folders } as FolderSnapshot<unknown>);
      while (snapshots.size > KEPT_WORKSPACES) snapshots.delete(snapshots.keys().next().value!);
    },
  };
}

/** Changed long enough before it was read that a later change cannot share its timestamps. */
function settled(st: fs.BigIntStats, readAt: number): boolean {
  const last = st.ctimeNs > st.mtimeNs ? st.ctimeNs : st.mtimeNs;
  return last < BigInt(readAt - SETTLED_MS) * 1_000_000n;
}

function sameKey(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
