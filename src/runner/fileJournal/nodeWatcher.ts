// A file watcher for plain Node (tests, the benchmark, a runner outside VS Code), with the same
// contract as VS Code's (watcher.ts): hints, not the truth. On macOS and Windows Node's recursive
// fs.watch is the OS's own (FSEvents, ReadDirectoryChangesW); on Linux Node's recursive mode puts
// an inotify watch on every *file*, so this one watches every folder instead (inotify reports the
// changes of a folder's entries), skipping .git and node_modules, and adds new folders as they
// appear. A watch it cannot add (the inotify limit) or an event without a name means changes may
// go unreported: it says so (`lost`), and the scan stats every file again.
import { type FSWatcher, lstatSync, readdirSync, watch } from 'node:fs';
import path from 'node:path';
import { Emitter } from '../../common/emitter';
import type { Disposable } from '../../common/disposable';
import type { WatchEvent, WorkspaceWatcher } from './watcher';

const SKIPPED = new Set(['.git', 'node_modules']);

export interface NodeWatcherOptions {
  /** Watch folder by folder (default on Linux) instead of with one recursive watch. */
  perFolder?: boolean;
  /** More folders than this: it stops adding watches and says changes may be lost. */
  maxFolders?: number;
}

export class NodeWatcher implements WorkspaceWatcher {
  private readonly events = new Emitter<WatchEvent>();
  private readonly handles = new Map<string, FSWatcher>();
  private readonly maxFolders: number;
  private broken = false;

  constructor(
    private readonly root: string,
    opts: NodeWatcherOptions = {},
  ) {
    this.maxFolders = opts.maxFolders ?? 50_000;
    if (opts.perFolder ?? process.platform === 'linux') this.watchTree(root);
    else this.watchRecursive();
  }

  onEvent(listener: (e: WatchEvent) => void): Disposable {
    return this.events.on(listener);
  }

  unwatched(): readonly string[] {
    return []; // .git and node_modules are not watched, but the scan never lists them either
  }

  /** Folders watched now (tests). */
  get folders(): number {
    return this.handles.size;
  }

  dispose(): void {
    for (const h of this.handles.values()) h.close();
    this.handles.clear();
    this.events.dispose();
  }

  private watchRecursive(): void {
    try {
      const h = watch(this.root, { recursive: true, persistent: false }, (_type, name) =>
        name === null
          ? this.lose('an event came without a name', false)
          : this.changed(path.join(this.root, String(name))),
      );
      h.on('error', (err) => this.lose(`the watcher failed: ${err.message}`));
      this.handles.set(this.root, h);
    } catch (err) {
      this.lose(`the workspace could not be watched: ${(err as Error).message}`);
    }
  }

  /** Watches `dir` and every folder below it (that is not watched yet). */
  private watchTree(dir: string): void {
    const stack = [dir];
    while (stack.length > 0 && !this.broken) {
      const d = stack.pop()!;
      if (this.handles.has(d) || !this.add(d)) continue;
      let entries;
      try {
        entries = readdirSync(d, { withFileTypes: true });
      } catch {
        continue; // gone or unreadable: its parent's event says so
      }
      for (const e of entries) if (e.isDirectory() && !SKIPPED.has(e.name)) stack.push(path.join(d, e.name));
    }
  }

  private add(dir: string): boolean {
    if (this.handles.size >= this.maxFolders) {
      this.lose(`more than ${this.maxFolders.toLocaleString('en')} folders to watch`);
      return false;
    }
    try {
      const h = watch(dir, { persistent: false }, (type, name) => this.onFolderEvent(dir, type, name));
      h.on('error', (err) => {
        this.forget(dir);
        // A folder that still exists is no longer watched: its changes would go unreported.
        if (lstatSync(dir, { throwIfNoEntry: false })) this.lose(`watching ${dir} failed: ${err.message}`);
      });
      this.handles.set(dir, h);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.lose(`${dir} could not be watched (${code})`);
      return false;
    }
  }

  private onFolderEvent(dir: string, type: string, name: string | Buffer | null): void {
    if (name === null) return this.lose('an event came without a name', false);
    const abs = path.join(dir, String(name));
    this.changed(abs);
    if (type !== 'rename') return;
    // Created or deleted: a new folder is watched with what is in it already; a deleted one let go.
    let st;
    try {
      st = lstatSync(abs, { throwIfNoEntry: false });
    } catch {
      st = undefined;
    }
    if (st?.isDirectory() && !SKIPPED.has(path.basename(abs))) this.watchTree(abs);
    else if (!st) this.forget(abs);
  }

  private forget(dir: string): void {
    for (const [d, h] of this.handles) {
      if (d === dir || d.startsWith(dir + path.sep)) {
        h.close();
        this.handles.delete(d);
      }
    }
  }

  private changed(abs: string): void {
    this.events.emit({ kind: 'changed', path: abs });
  }

  /** `lasting`: some folder is not watched any more (else: one event could not be read). */
  private lose(reason: string, lasting = true): void {
    this.broken ||= lasting;
    this.events.emit({ kind: 'lost', reason, lasting });
  }
}
