// The fallback's file walk: depth-first, names sorted, ignore files and exclude globs applied as
// ripgrep applies them (ignoreChain.ts), symlinks and special files skipped (ripgrep does not
// follow links either). Async, one folder at a time, so the extension host stays responsive.
import { promises as fs, type Dirent } from 'node:fs';
import path from 'node:path';
import { ToolFailure } from '../types';
import { IgnoreRules } from './gitignore';
import { IgnoreChain, loadAncestors, loadFrame } from './ignoreChain';
import type { Scope } from './types';

export interface WalkOptions {
  /** Only files whose root-relative path passes are collected. */
  filter: ((rel: string) => boolean) | null;
  maxFiles: number;
  /** Epoch ms; the walk stops (incomplete) when it is reached. */
  deadline: number | null;
}

export interface Walk {
  files: string[];
  complete: boolean;
  /** What ended an incomplete walk. */
  stoppedBy: 'limit' | 'deadline' | null;
}

const byName = (a: Dirent, b: Dirent): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export async function walkFiles(scope: Scope, opts: WalkOptions): Promise<Walk> {
  const start = scope.rel === '.' ? scope.root : path.join(scope.root, scope.rel);
  const st = await fs.stat(start);
  if (!st.isDirectory()) {
    const files = st.isFile() && (opts.filter === null || opts.filter(scope.rel)) ? [scope.rel] : [];
    return { files, complete: true, stoppedBy: null };
  }
  const overrides = IgnoreRules.fromLines(scope.excludes, { braces: true });
  const walk: Walk = { files: [], complete: true, stoppedBy: null };
  // The folder's own ignore files are read by visit(); its ancestors' here.
  const parents = path.dirname(start) === start ? IgnoreChain.empty() : await loadAncestors(path.dirname(start));
  await visit(start, parents, { scope, opts, overrides, walk });
  return walk;
}

interface WalkState {
  scope: Scope;
  opts: WalkOptions;
  overrides: IgnoreRules;
  walk: Walk;
}

/** Returns false once the walk must stop. */
async function visit(dir: string, parents: IgnoreChain, s: WalkState): Promise<boolean> {
  if (s.scope.signal.aborted) throw new ToolFailure('Cancelled.');
  if (s.opts.deadline !== null && Date.now() > s.opts.deadline) return stop(s.walk, 'deadline');
  let entries: Dirent[];
  try {
    entries = (await fs.readdir(dir, { withFileTypes: true })).sort(byName);
  } catch {
    return true; // unreadable or gone since it was listed: nothing to walk, as ripgrep
  }
  const chain = parents.child(await loadFrame(dir, new Set(entries.map((e) => e.name))));
  for (const e of entries) {
    // Per entry too: one folder can hold many files, each judged against every ignore rule.
    if (s.opts.deadline !== null && Date.now() > s.opts.deadline) return stop(s.walk, 'deadline');
    const isDir = e.isDirectory();
    if (!isDir && !e.isFile()) continue; // symlinks, sockets, FIFOs
    const abs = path.join(dir, e.name);
    const rel = toRel(s.scope.root, abs);
    if (s.overrides.match(rel, isDir) === 'ignore' || chain.ignored(abs, isDir)) continue;
    if (isDir) {
      if (!(await visit(abs, chain, s))) return false;
    } else if (s.opts.filter === null || s.opts.filter(rel)) {
      if (s.walk.files.length >= s.opts.maxFiles) return stop(s.walk, 'limit');
      s.walk.files.push(rel);
    }
  }
  return true;
}

function stop(walk: Walk, why: 'limit' | 'deadline'): false {
  walk.complete = false;
  walk.stoppedBy = why;
  return false;
}

function toRel(root: string, abs: string): string {
  const rel = path.relative(root, abs);
  return path.sep === '/' ? rel : rel.split(path.sep).join('/');
}
