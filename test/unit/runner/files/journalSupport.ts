// Shared by the file-change and restore tests (the file-engine tests share support.ts): a workspace
// with a few files (optionally a git repository), the real agent loop driving scripted tool calls
// over HTTP, and the product's restore action (actions/restore/action.ts: the plan, and the
// transaction with the product's writer, files.ts fsRestoreWriter) as the extension builds it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer } from '../../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../../fixtures/modelServer/scenario';
import type { RestoreAction } from '../../../../src/actions/restore/action';
import type { WorkspaceIndex } from '../../../../src/runner/fileJournal/scanIndex';
import { createCodingRegistry, type FileFinder } from '../../../../src/runner/tools';
import type { CheckpointStore } from '../../../../src/store/api/types';
import { testActions } from '../../../support/actions';
import { makeRunner, owner, tmp } from '../../loop/support';

export type Call = { name: string; arguments: Record<string, unknown> };

export function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.email=t@example.com', '-c', 'user.name=t', '-c', 'commit.gpgsign=false', ...args],
    { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

/**
 * Gives a file a modification time safely before git's next look at it. Written and added in the same
 * tick of the kernel's file clock, a file is racily clean (its mtime not before the index's), and
 * git's record rightly cannot vouch for it (git.ts, notAsRecorded): on a fast machine `git add` can
 * finish within that tick. A file written before git looked is what these tests mean.
 */
export function writtenBeforeGitLooks(abs: string): void {
  const past = new Date(Date.now() - 10_000);
  fs.utimesSync(abs, past, past);
}

/** A workspace holding `files`; with `git`, committed in a repository (the files written before git looked). */
export function workspace(files: Record<string, string | Buffer>, opts: { git?: boolean } = {}): string {
  const dir = tmp('files');
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
    if (opts.git) writtenBeforeGitLooks(path.join(dir, rel));
  }
  if (opts.git) {
    git(dir, 'init', '-q');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'initial');
  }
  return dir;
}

export interface Driven {
  runId: string;
  store: CheckpointStore;
  workspace: string;
}

export interface DriveOptions {
  /** Called with each checkpoint as it is written (synchronously, before the loop goes on). */
  onPhase?: (seq: number, phase: string, step: number) => void;
  store?: CheckpointStore;
  /** The file engine of the tools (default: the Node walk). */
  finder?: FileFinder;
  /** The command scan's index, as the extension shares one between runs (default: the journal's own, without a watcher). */
  index?: WorkspaceIndex;
}

/** Runs the real loop over `calls` (one per step, every tool auto-approved). */
export async function drive(ws: string, calls: Call[], opts: DriveOptions = {}): Promise<Driven> {
  const { onPhase, store, finder, index } = opts;
  const scenario: Scenario = {
    name: 'file-journal',
    description: 'offline demo model: scripted file changes',
    model: DEMO_MODEL_ID,
    subconversations: [],
    turns: [
      ...calls.map((c, i) => ({ reply: { content: `step ${i + 1}`, tool_calls: [c] } })),
      { reply: { content: 'done' } },
    ],
  };
  const server = await startModelServer({ scenario });
  try {
    const auto = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;
    const deps = {
      ...(finder ? { tools: createCodingRegistry({ files: finder }) } : {}),
      ...(index ? { files: { index } } : {}),
    };
    const r = makeRunner({ baseURL: server.url, workspace: ws, policy: auto, deps, ...(store ? { store } : {}) });
    const sub = onPhase
      ? r.runner.events.on((e) => e.type === 'phase' && onPhase(e.record.seq, e.record.phase, e.record.step))
      : undefined;
    const handle = await r.runner.start({ task: 'change files' });
    const out = await handle.done;
    sub?.dispose();
    if (out.state !== 'completed') throw new Error(`run ended ${out.state}: ${out.detail}`);
    return { runId: handle.runId, store: r.store, workspace: ws };
  } finally {
    await server.close();
  }
}

const notHere = async () => Promise.reject(new Error('no runner in this test'));

/**
 * The product's restore over a workspace (no run executing: the driven runs have finished). `plan`
 * and `apply` are the extension's; `run` is the whole action with a scripted user (test/support/actions.ts).
 */
export function productRestore(
  store: CheckpointStore,
  workspace: string,
  o: { storageDir?: string } = {},
): RestoreAction {
  const runner = { isActive: () => false, resume: notHere, decideApprovals: notHere };
  return testActions({ store, runner, workspace, owner: owner('restore'), ...o }).actions.restore;
}

/** The contents of `paths` (null = absent). */
export function read(ws: string, paths: readonly string[]): Map<string, Buffer | null> {
  return new Map(paths.map((p) => [p, fs.existsSync(path.join(ws, p)) ? fs.readFileSync(path.join(ws, p)) : null]));
}

export const same = (a: Buffer | null | undefined, b: Buffer | null | undefined): boolean =>
  !a || !b ? (a ?? null) === (b ?? null) : a.equals(b);
