// The host's file watcher, as the command scan uses it: a hint of which files changed since the
// last scan, never the truth. The scan trusts it for one thing only — which files' stats to take
// again *before* a command (files changed in place, whose folder's stat does not move) — and even
// there a missed event costs at most a wrong attribution (a change the user made just before the
// command shown as the command's), never a missed change: *after* the command every file is
// statted again. The runner stays vscode-free: the extension passes VS Code's watcher
// (src/workspaceWatcher.ts), plain Node a Node one (nodeWatcher.ts) or none (then every file is
// statted before the command too: correct, slower).
import path from 'node:path';
import type { Disposable } from '../../common/disposable';

export type WatchEvent =
  /** A file or folder was created, changed or deleted (a folder's event may stand for everything below it). */
  | { kind: 'changed'; path: string }
  /** Some changes may not have been reported; `lasting`: none will be from now on (the watcher broke). */
  | { kind: 'lost'; reason: string; lasting: boolean };

export interface WorkspaceWatcher extends Disposable {
  onEvent(listener: (e: WatchEvent) => void): Disposable;
  /** Globs (VS Code syntax, relative to the root) the watcher leaves out: files there are statted every time. */
  unwatched(): readonly string[];
}

/** What changed since the last scan took the hints. */
export interface Hints {
  /** Every file must be statted: no watcher, not yet checked against the files, or events lost. */
  all: boolean;
  /** Folder (relative, '' = root) → names in it that had an event. */
  byDir: ReadonlyMap<string, ReadonlySet<string>>;
  /** Paths with an event that may be folders: everything below them is statted. */
  paths: ReadonlySet<string>;
}

/** More paths than this between two scans: stat everything instead of keeping them. */
const MAX_PATHS = 100_000;
/** Never listed by the scan, and churned by git and package managers: their events are dropped at once. */
const SKIPPED = /(^|\/)(\.git|node_modules)(\/|$)/;

/** Collects the watcher's events between scans. Without a watcher it always answers `all`. */
export class ChangeHints implements Disposable {
  private all = true;
  private lasting: string | null = null;
  private paths = new Set<string>();
  private readonly sub: Disposable | undefined;
  private roots: string[];

  constructor(root: string, watcher: WorkspaceWatcher | undefined) {
    this.roots = [path.resolve(root)];
    if (!watcher) this.lasting = 'no file watcher';
    this.sub = watcher?.onEvent((e) => this.onEvent(e));
  }

  /** The root's real path, once known: hosts may report either spelling. */
  set realRoot(real: string) {
    if (!this.roots.includes(real)) this.roots = [this.roots[0]!, real];
  }

  /** Takes the hints gathered so far and starts gathering anew. */
  take(): Hints {
    const paths = this.paths;
    const all = this.all || this.lasting !== null;
    this.paths = new Set();
    this.all = false;
    const byDir = new Map<string, Set<string>>();
    if (!all) {
      for (const rel of paths) {
        const i = rel.lastIndexOf('/');
        const dir = i < 0 ? '' : rel.slice(0, i);
        let names = byDir.get(dir);
        if (!names) byDir.set(dir, (names = new Set()));
        names.add(rel.slice(i + 1));
      }
    }
    return { all, byDir, paths: all ? new Set() : paths };
  }

  /** The last scan did not use what it took (it stopped early): the next one stats everything. */
  lose(): void {
    this.all = true;
  }

  /** Why the hints cannot narrow a scan at all (null: they can, once checked against the files). */
  get untrusted(): string | null {
    return this.lasting;
  }

  private onEvent(e: WatchEvent): void {
    if (e.kind === 'lost') {
      this.all = true;
      if (e.lasting) this.lasting = e.reason;
      return;
    }
    if (this.all) return;
    const rel = this.relative(e.path);
    if (rel === undefined || SKIPPED.test(rel)) return;
    this.paths.add(rel);
    if (this.paths.size > MAX_PATHS) {
      this.all = true;
      this.paths = new Set();
    }
  }

  private relative(abs: string): string | undefined {
    for (const root of this.roots) {
      const rel = path.relative(root, abs);
      if (rel === '') return '';
      if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) continue;
      return path.sep === '/' ? rel : rel.split(path.sep).join('/');
    }
    return undefined;
  }

  dispose(): void {
    this.sub?.dispose();
  }
}
