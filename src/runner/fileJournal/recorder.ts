// The file-change recorder around one side-effecting tool call (calls/call.ts calls it around the
// effect journal's intent and result; the user meets what it records as the file journal). A tool
// that names the files it writes (write_file, edit_file) gets their pre-images stored as blobs
// *before* the intent, so a crash mid-write leaves a durable pre-image. A command gets a bounded
// stat scan before and after (of the files list_files sees, kept between commands in a
// WorkspaceIndex: scan.ts); a file it changed is journaled with its earlier content only when that
// is known — the agent wrote it earlier in this run (and it was still that), it did not exist, or
// git had it clean — otherwise as unknown, with the reason.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Effect, FileChange, FileScan, FileVersion } from '../../store/api/schema';
import { confinePath, confineStoredPath } from '../tools/paths';
import type { Tool } from '../tools/types';
import { cleanContents, repoBefore, type RepoBefore } from './git';
import { changedPaths, repoOf, type ScanOptions } from './scan';
import { type Scan, WorkspaceIndex } from './scanIndex';
import {
  ABSENT,
  DEFAULT_MAX_KEPT_BYTES,
  readVersion,
  sameVersion,
  unknownVersion,
  versionOf,
  type PutBlob,
} from './versions';

export const DEFAULT_MAX_CHANGED_FILES = 2_000;
const NOT_FINISHED = unknownVersion('the call has not finished (the window closed or crashed while it ran)');

export interface FileChangeRecorderOptions {
  workspaceRoot: string;
  /** The extension's own storage folder: never journaled (paths.ts refuses it). */
  storageDir?: string;
  /** What the last command scan saw, shared by every run of the window (with the host's watcher). Default: one of its own, without a watcher. */
  index?: WorkspaceIndex;
  /** files.exclude globs, read at each command. */
  exclude?: () => readonly string[];
  maxKeptBytes?: number;
  scan?: Omit<ScanOptions, 'exclude' | 'signal'>;
  /** More changed files than this from one command are counted, not journaled. */
  maxChangedFiles?: number;
  /** How git is asked which files it had as they were (git.ts); default: its index, read before the command. */
  git?: 'index' | 'status';
}

export interface WatchContext {
  put: PutBlob;
  /** The run's effect records so far (for what the agent wrote earlier). */
  effects: () => Promise<Effect[]>;
  signal?: AbortSignal;
}

export interface FileWatch {
  /** Pre-images for the intent (already stored as blobs). */
  readonly files: FileChange[];
  /** After the call: what changed. `intentFiles`: the intent's list as stored (a resumed call keeps its first pre-images). */
  finish(intentFiles: FileChange[] | undefined): Promise<{ files: FileChange[]; file_scan?: FileScan }>;
}

export class FileChangeRecorder {
  private readonly index: WorkspaceIndex;

  constructor(private readonly opts: FileChangeRecorderOptions) {
    // An index of another root (never passed by the extension) would scan the wrong tree.
    const shared = opts.index && path.resolve(opts.index.root) === path.resolve(opts.workspaceRoot);
    this.index = shared ? opts.index! : new WorkspaceIndex({ root: opts.workspaceRoot });
  }

  private get maxKept(): number {
    return this.opts.maxKeptBytes ?? DEFAULT_MAX_KEPT_BYTES;
  }

  /** undefined: the tool changes no files. Never throws: what cannot be observed is journaled as unknown. */
  async watch(tool: Tool, args: unknown, ctx: WatchContext): Promise<FileWatch | undefined> {
    const effect = tool.files;
    if (!effect) return undefined;
    if (effect.kind === 'paths') return this.watchPaths(effect.paths(args as never), ctx);
    const command =
      typeof (args as { command?: unknown })?.command === 'string' ? (args as { command: string }).command : tool.name;
    return this.watchCommand(command, ctx);
  }

  private async watchPaths(userPaths: string[], ctx: WatchContext): Promise<FileWatch> {
    const root = this.opts.workspaceRoot;
    const files: FileChange[] = [];
    // Files whose content is not known (too large to read): their stat tells whether the call changed them.
    const unknownStats = new Map<string, string | null>();
    for (const p of userPaths) {
      const confined = await confinePath(root, p, this.opts).catch(() => undefined);
      if (!confined || confined.rel === '.') continue; // the tool refuses it too: nothing to journal
      const before = await readVersion(confined.abs, ctx.put, this.maxKept);
      if (before.kind === 'unknown') unknownStats.set(confined.rel, await statKey(confined.abs));
      files.push({ path: confined.rel, before, after: NOT_FINISHED });
    }
    return {
      files,
      finish: async (intentFiles) => {
        const out: FileChange[] = [];
        for (const f of intentFiles ?? files) {
          // A resumed call's intent comes from the store: its paths are confined again, never joined blindly.
          const confined = await confineStoredPath(root, f.path, this.opts).catch(() => undefined);
          if (!confined || confined.rel !== f.path) continue;
          const after = await readVersion(confined.abs, ctx.put, this.maxKept);
          const untouched = after.kind === 'unknown' && sameStat(unknownStats.get(f.path), await statKey(confined.abs));
          if (!sameVersion(f.before, after) && !untouched) out.push({ path: f.path, before: f.before, after });
        }
        return { files: out };
      },
    };
  }

  private async watchCommand(command: string, ctx: WatchContext): Promise<FileWatch> {
    const root = this.opts.workspaceRoot;
    const scanOpts = { ...this.opts.scan, exclude: this.opts.exclude?.() ?? [] };
    const before = await this.index.before({ ...scanOpts, signal: ctx.signal });
    const known = await this.agentVersionsStillThere(before, await ctx.effects());
    const repos = new Map<string, RepoBefore>();
    for (const rel of before.repos) {
      const r = await repoBefore(root, rel, { sigOf: (p) => before.files.get(p), way: this.opts.git });
      if (r) repos.set(rel, r);
    }
    return {
      files: [],
      finish: async () => {
        const after = await this.index.after(scanOpts);
        const changed = changedPaths(before, after);
        const limit = this.opts.maxChangedFiles ?? DEFAULT_MAX_CHANGED_FILES;
        const files: FileChange[] = [];
        const fromGit = await this.fromGit(
          changed.slice(0, limit).filter((rel) => before.files.has(rel) && !known.has(rel)),
          repos,
        );
        for (const rel of changed.slice(0, limit)) {
          const afterV = await readVersion(path.join(root, rel), ctx.put, this.maxKept);
          const beforeV = await this.beforeOf(rel, { command, before, after, known, fromGit, put: ctx.put });
          if (!sameVersion(beforeV, afterV)) files.push({ path: rel, before: beforeV, after: afterV });
        }
        const notes = [
          before.note && `before the command: ${before.note}`,
          after.note && `after the command: ${after.note}`,
        ];
        if (changed.length > limit)
          notes.push(
            `${(changed.length - limit).toLocaleString('en')} more changed files were not journaled (more than ${limit.toLocaleString('en')})`,
          );
        const note = notes.filter(Boolean).join('; ') || null;
        return {
          files,
          file_scan: {
            files: after.files.size,
            ms: round(before.ms + after.ms),
            complete: before.complete && after.complete && changed.length <= limit,
            note,
          },
        };
      },
    };
  }

  /** The agent's last version of each file it wrote, where the file still has exactly that content. */
  private async agentVersionsStillThere(scan: Scan, effects: Effect[]): Promise<Map<string, FileVersion>> {
    const last = new Map<string, FileVersion>();
    for (const e of effects) for (const f of e.files ?? []) last.set(f.path, f.after);
    const out = new Map<string, FileVersion>();
    for (const [rel, v] of last) {
      if (v.kind !== 'file' || v.blob === null || scan.files.get(rel)?.size !== v.size) continue;
      const now = await readVersion(path.join(this.opts.workspaceRoot, rel), null);
      if (sameVersion(now, v)) out.set(rel, v);
    }
    return out;
  }

  /** What git knew of each path (by workspace-relative path): content at HEAD, or why not; absent = no repository. */
  private async fromGit(paths: string[], repos: Map<string, RepoBefore>): Promise<Map<string, Buffer | string>> {
    const byRepo = new Map<string, string[]>();
    for (const rel of paths) {
      const repoRel = repoOf([...repos.keys()], rel);
      if (repoRel !== undefined) byRepo.set(repoRel, [...(byRepo.get(repoRel) ?? []), rel]);
    }
    const out = new Map<string, Buffer | string>();
    for (const [repoRel, rels] of byRepo) {
      const inRepo = (rel: string) => (repoRel ? rel.slice(repoRel.length + 1) : rel);
      const got = await cleanContents(this.opts.workspaceRoot, repos.get(repoRel)!, rels.map(inRepo));
      for (const rel of rels) out.set(rel, got.get(inRepo(rel)) ?? 'git could not be asked about it');
    }
    return out;
  }

  private async beforeOf(
    rel: string,
    c: {
      command: string;
      before: Scan;
      after: Scan;
      known: Map<string, FileVersion>;
      fromGit: Map<string, Buffer | string>;
      put: PutBlob;
    },
  ): Promise<FileVersion> {
    const sig = c.before.files.get(rel);
    if (!sig && !c.before.complete)
      return unknownVersion(
        `changed by \`${c.command}\`; the scan before it was incomplete, so its earlier state is not known`,
      );
    // Not listed before, but under ignore rules that changed: it may have been there, hidden.
    if (!sig && c.after.rulesChanged.some((d) => d === '' || rel.startsWith(`${d}/`)))
      return unknownVersion(
        `listed after \`${c.command}\` changed the ignore rules over it; whether it existed before is not known`,
      );
    if (!sig) return ABSENT;
    const mine = c.known.get(rel);
    if (mine) return mine;
    const got = c.fromGit.get(rel);
    if (got === undefined)
      return unknownVersion(
        `changed by \`${c.command}\`; its earlier content is not known (the agent had not written it, and git does not track it)`,
      );
    if (typeof got === 'string')
      return unknownVersion(`changed by \`${c.command}\`; its earlier content is not known (${got})`);
    if (got.length !== sig.size)
      return unknownVersion(
        `changed by \`${c.command}\`; git's copy does not match the file as it was (size ${got.length} ≠ ${sig.size})`,
      );
    return versionOf(got, c.put, this.maxKept, sig.mode);
  }
}

const round = (ms: number) => Math.round(ms * 10) / 10;

/** What any write to a file changes (a write moves ctime); null when it cannot be statted. */
async function statKey(abs: string): Promise<string | null> {
  const st = await fs.lstat(abs, { bigint: true }).catch(() => null);
  return st && `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

const sameStat = (a: string | null | undefined, b: string | null): boolean => a != null && a === b;
