// What the sandbox must know about the workspace before a command starts: which paths stay
// read-only, which look like secrets, and what stops each protection from being undone.
// - A read-only path is a mount point inside the sandbox, so it cannot be renamed or removed
//   (EBUSY). Its parent folders are bound onto themselves for the same reason: otherwise
//   `mv sub sub2 && mkdir -p sub/.git` puts a fresh, writable `.git` where the protected one was.
// - A protected path the host acts on as soon as it appears (profile.ts `guardMissing`: `.git`
//   in a folder that is not a repository, `.vscode`, agents' hooks), missing at the workspace
//   root, gets an empty read-only folder for the command's lifetime (launch.ts creates and
//   removes it), so `git init` or `mkdir .vscode` fails instead of arming the host.
// - A protected entry that is a symbolic link cannot be a mount point: its folder is read-only.
// The walk skips node_modules and never enters `.git`; it is bounded, and refuses past the bound
// rather than protect half a workspace. A folder unchanged since the last walk is not read again
// (folders.ts); what decides the protections — links' targets, the missing root paths — is.
import fs, { type Dirent } from 'node:fs';
import path from 'node:path';
import { DEFAULT_FILE_RULES, fileGlob, protectedWhy, secretWhy, type FileRules } from '../tools/protectedFiles';
import { folderReader } from './folders';
import { READ_ONLY_DEFAULTS } from './profile';

export type EntryKind = 'dir' | 'file';
export interface Entry {
  /** Workspace-relative, '/'-separated. */
  rel: string;
  kind: EntryKind;
}

export interface WorkspaceLayout {
  /** Existing protected paths: read-only binds. */
  readOnly: Entry[];
  /** Folders (and files) bound onto themselves so that nothing protected below them can be renamed away. */
  pinned: Entry[];
  /** Missing protected paths at the root: the first missing name, an empty read-only folder while the command runs. */
  placeholders: string[];
  /** Secret-looking files and folders: hidden. */
  hidden: Entry[];
  /** Where secret-looking symbolic links lead (absolute): hidden too, since the name is what made them secret. */
  hiddenTargets: Array<{ abs: string; kind: EntryKind }>;
  /** Folders read-only as a whole because a protected entry in them is a symbolic link ('' is the workspace). */
  frozen: string[];
}

export class SandboxLayoutError extends Error {
  override readonly name = 'SandboxLayoutError';
}

export const MAX_LAYOUT_FOLDERS = 50_000;
const SKIPPED = new Set(['node_modules']);

/** The read-only rules: the defaults and the caller's patterns. */
export function readOnlyRules(extra: readonly string[] = []): FileRules {
  const protect = [
    ...READ_ONLY_DEFAULTS.flatMap((g) => g.patterns.map((p) => ({ glob: fileGlob(p), why: g.why }))),
    ...extra.map((p) => ({ glob: fileGlob(p), why: 'it is on your protected files list' })),
  ];
  return { protect, secrets: [], notSecret: [] };
}

/** Root-level paths the read-only patterns name without wildcards: `**\/.github/hooks` → `.github/hooks`. */
export function fixedRootPaths(patterns: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of patterns) {
    const rest = p.replace(/^(\*\*\/)+/, '');
    if (rest !== '' && !/[*?[\]{}]/.test(rest)) out.add(rest);
  }
  return [...out];
}

/** A folder's entries as the layout sees them: kept with the folder while it is unchanged (folders.ts). */
interface Child {
  name: string;
  kind: EntryKind | 'link';
  secret: boolean;
  /** A read-only rule names it (it is read-only unless a folder above already is). */
  protect: boolean;
}

export async function workspaceLayout(
  root: string,
  opts: {
    readOnly?: readonly string[];
    secrets?: FileRules;
    writable: boolean;
    maxFolders?: number;
    /** The clock the folders' change times are compared with (folders.ts); tests move it. */
    now?: () => number;
  },
): Promise<WorkspaceLayout & { listed: number }> {
  const ro = readOnlyRules(opts.readOnly);
  const secrets = opts.secrets ?? DEFAULT_FILE_RULES;
  const layout: WorkspaceLayout = {
    readOnly: [],
    pinned: [],
    placeholders: [],
    hidden: [],
    hiddenTargets: [],
    frozen: [],
  };
  const max = opts.maxFolders ?? MAX_LAYOUT_FOLDERS;
  const classify = (dir: string, entries: Dirent[]): Child[] =>
    entries.map((e) => {
      const rel = dir === '' ? e.name : `${dir}/${e.name}`;
      const kind = e.isSymbolicLink() ? 'link' : e.isDirectory() ? 'dir' : 'file';
      return {
        name: e.name,
        kind,
        secret: secretWhy([rel], secrets) !== null,
        protect: protectedWhy([rel], ro) !== null,
      };
    });
  // The rules are compared by identity: the settings keep one object while they are unchanged.
  const reader = folderReader(root, [secrets, ...(opts.readOnly ?? [])], classify, opts.now);
  const queue: Array<{ rel: string; inProtected: boolean }> = [{ rel: '', inProtected: false }];
  const links: string[] = [];
  for (let i = 0; i < queue.length; i++) {
    if (i >= max)
      throw new SandboxLayoutError(
        `the workspace has more than ${max} folders outside node_modules: too many to map the protected and secret files in them`,
      );
    const d = queue[i]!;
    for (const e of reader.read(d.rel) ?? []) {
      const rel = d.rel === '' ? e.name : `${d.rel}/${e.name}`;
      if (e.secret) {
        if (e.kind !== 'link') layout.hidden.push({ rel, kind: e.kind });
        else links.push(path.join(root, rel));
        continue;
      }
      const isProtected = !d.inProtected && e.protect;
      if (isProtected) {
        if (e.kind === 'link') layout.frozen.push(d.rel);
        else layout.readOnly.push({ rel, kind: e.kind });
      }
      // Inside a read-only folder only secrets matter; `.git` holds none worth a walk.
      if (e.kind === 'dir' && !SKIPPED.has(e.name) && e.name.toLowerCase() !== '.git')
        queue.push({ rel, inProtected: d.inProtected || isProtected });
    }
    await reader.pause();
  }
  reader.keep();
  for (const abs of links) {
    const target = linkTarget(abs);
    if (target) layout.hiddenTargets.push(target);
  }
  if (opts.writable) {
    for (const e of layout.readOnly) pin(layout, e.rel);
    const guarded = READ_ONLY_DEFAULTS.filter((g) => g.guardMissing).flatMap((g) => g.patterns);
    for (const rel of fixedRootPaths(guarded)) guardMissing(root, rel, layout);
  }
  // `.claude/settings.json` and `.claude/settings.local.json` both need `.claude`: one placeholder.
  layout.placeholders = [...new Set(layout.placeholders)];
  layout.pinned = dedupe(layout.pinned);
  layout.frozen = [...new Set(layout.frozen)];
  return { ...layout, listed: reader.listed };
}

// The few lookups after the walk are synchronous too: under load each thread-pool round trip waits its turn.
function linkTarget(abs: string): { abs: string; kind: EntryKind } | null {
  try {
    const real = fs.realpathSync(abs);
    return { abs: real, kind: fs.statSync(real).isDirectory() ? 'dir' : 'file' };
  } catch {
    return null; // dangling: nothing to read
  }
}

function lstatOrNull(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

/** Every folder above `rel` (not the workspace itself, a mount point already). */
function pin(layout: WorkspaceLayout, rel: string): void {
  const names = rel.split('/');
  for (let i = 1; i < names.length; i++) layout.pinned.push({ rel: names.slice(0, i).join('/'), kind: 'dir' });
}

/** The first missing name on the way to `rel` gets a placeholder; a file or a link on the way is pinned or frozen. */
function guardMissing(root: string, rel: string, layout: WorkspaceLayout): void {
  const names = rel.split('/');
  for (let i = 1; i <= names.length; i++) {
    const sub = names.slice(0, i).join('/');
    const st = lstatOrNull(path.join(root, sub));
    if (st === null) {
      layout.placeholders.push(sub);
      pin(layout, sub);
      return;
    }
    if (st.isDirectory()) continue;
    if (i === names.length) return; // it exists: the walk found it
    // A file where a folder would be could be replaced by one: it stays where it is; a link freezes its folder.
    if (st.isSymbolicLink()) layout.frozen.push(names.slice(0, i - 1).join('/'));
    else {
      layout.pinned.push({ rel: sub, kind: 'file' });
      pin(layout, sub);
    }
    return;
  }
}

/** Parents first, each once. */
function dedupe(entries: Entry[]): Entry[] {
  const seen = new Map<string, Entry>();
  for (const e of entries) if (!seen.has(e.rel)) seen.set(e.rel, e);
  return [...seen.values()].sort((a, b) => a.rel.split('/').length - b.rel.split('/').length);
}
