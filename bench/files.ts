// The file journal's figures, measured with the product's own code:
//  - stored bytes per edit and restore-plan time on a 1000-step run of edits journaled by the
//    FileChangeRecorder into the disk store (the loop's path: pre-image blobs, intent, write, post-image, result);
//  - the command scan (the index refreshed before and after, plus git status when the workspace is
//    a repository) on a generated 50,000-file workspace, with a file watcher naming what changed
//    (the Node one, as VS Code's in the extension) and without one, against a shadow-git snapshot of
//    the same tree as the peers take it (`git add -A && git commit` into a separate git dir),
//    interleaved in this process.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileChangeRecorder } from '../src/runner/fileJournal/recorder';
import { prepareRestore } from '../src/actions/restore/files';
import { NodeWatcher } from '../src/runner/fileJournal/nodeWatcher';
import { WorkspaceIndex } from '../src/runner/fileJournal/scanIndex';
import { editFile, runCommand } from '../src/runner/tools';
import { openDiskStore } from '../src/store';
import type { CheckpointStore } from '../src/store/api/types';
import { BENCH_OWNER } from './contenders/ours';
import { median } from './stats';

export interface FileJournalResult {
  edits: number;
  files: number;
  /** Blob + log bytes the store grew by, per journaled edit (mean over the run, checkpoints included). */
  storedBytesPerEdit: number;
  /** The size of the edited file (median): what a whole-file pre/post image costs at most. */
  fileBytesPerEdit: number;
  /** The bytes the edit itself changed (median). */
  changedBytesPerEdit: number;
  /** prepareRestore to the first checkpoint (every edit reversed), median of rounds. */
  planAllMs: number;
  planAllFiles: number;
  /** prepareRestore to the checkpoint 10 edits before the end. */
  planLast10Ms: number;
  scan: ScanResult;
}

export interface ScanResult {
  files: number;
  /** Our journal around one command that changes 10 files, per way the scan runs: before scan + after scan. */
  oursMs: Record<ScanMode, number>;
  /** The same in a git repository: git's index read before, the changed files' blobs read after. */
  oursGitMs: Record<ScanMode, number>;
  /** The same with a watcher, asking `git status` before instead (the way where the index is not read: Windows, a split index). */
  oursGitStatusMs: number;
  /** The first scan (walks the tree: what the index costs once per window, or after a lost watcher). */
  firstWalkMs: number;
  /** Shadow git: the first snapshot (the whole tree), then one after the same 10 changes. */
  shadowFirstMs: number;
  shadowNextMs: number;
  /** The same, taken in the rounds where the workspace is a git repository (side by side with oursGitMs). */
  shadowNextGitMs: number;
  /** 1-minute load average when the scan rounds began and ended (the machine is shared). */
  load: [number, number];
}

/** The host's case (a file watcher names what to stat before a command) and the fallback without one. */
type ScanMode = 'watcher' | 'none';
const MODES: readonly ScanMode[] = ['watcher', 'none'];
const MODE_NAME: Record<ScanMode, string> = { watcher: 'with a file watcher', none: 'without one' };

const log = (m: string): void => void process.stderr.write(`${m}\n`);

function git(cwd: string, args: string[], env: Record<string, string> = {}): void {
  execFileSync(
    'git',
    [
      '-c',
      'user.email=b@example.com',
      '-c',
      'user.name=bench',
      '-c',
      'commit.gpgsign=false',
      '-c',
      'gc.auto=0',
      ...args,
    ],
    { cwd, stdio: 'ignore', env: { ...process.env, ...env } },
  );
}

/** `count` small source files in folders of 100, deterministic. */
function generateWorkspace(dir: string, count: number): void {
  for (let i = 0; i < count; i++) {
    const d = path.join(dir, `pkg${Math.floor(i / 1000)}`, `mod${Math.floor(i / 100) % 10}`);
    if (i % 100 === 0) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(d, `file${i}.ts`), `export const value${i} = ${i};\n// ${'x'.repeat(40 + (i % 200))}\n`);
  }
  fs.writeFileSync(path.join(dir, '.gitignore'), 'dist/\n');
}

async function journaledCall(
  journal: FileChangeRecorder,
  store: CheckpointStore,
  runId: string,
  step: number,
  tool: typeof editFile | typeof runCommand,
  args: Record<string, unknown>,
  root: string,
): Promise<void> {
  const id = `call_${step}`;
  const watch = await journal.watch(tool, args, {
    put: (c) => store.putBlob(runId, c),
    effects: () => store.listEffects(runId),
  });
  const intent = await store.recordIntent(runId, {
    tool_call_id: id,
    step,
    tool_name: tool.name,
    input_hash: id,
    side_effecting: true,
    ...(watch?.files.length ? { files: watch.files } : {}),
  });
  const out = await tool.run(args as never, {
    workspaceRoot: root,
    signal: new AbortController().signal,
    idempotencyKey: id,
    outputCap: 32 * 1024,
  });
  const journaled = watch ? await watch.finish(intent.files) : {};
  await store.recordResult(runId, id, {
    output: out.output,
    output_hash: id,
    is_error: out.is_error,
    blob: null,
    ...journaled,
  });
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const f of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const st = fs.statSync(path.join(dir, f));
    if (st.isFile()) n += st.size;
  }
  return n;
}

export async function measureFileJournal(
  base: string,
  opts: { edits: number; scanFiles: number; rounds: number },
): Promise<FileJournalResult> {
  const root = path.join(base, 'fj-workspace');
  const storeDir = path.join(base, 'fj-store');
  fs.mkdirSync(root, { recursive: true });
  const FILES = 200;
  for (let i = 0; i < FILES; i++)
    fs.writeFileSync(
      path.join(root, `f${i}.txt`),
      Array.from({ length: 20 + (i % 7) * 60 }, (_, l) => `line ${l} of file ${i}: ${'lorem ipsum '.repeat(4)}`).join(
        '\n',
      ) + '\n',
    );
  const store = openDiskStore(storeDir);
  const { run, lease } = await store.createRun(
    { title: 'bench files', task: 'edit', agent_name: 'bench', model: 'm' },
    BENCH_OWNER,
  );
  const runId = run.run_id;
  await store.append(runId, {
    phase: 'run_started',
    step: 0,
    payload: { agent_name: 'bench', resumed: false, task: 'edit', extension_version: '0', tool_schema_hash: 'h' },
  });
  const journal = new FileChangeRecorder({ workspaceRoot: root });
  await store.flush();
  const startBytes = dirBytes(path.join(storeDir, 'runs', runId));
  const fileBytes: number[] = [];
  const changed: number[] = [];
  const seqs: number[] = [];
  log(`  file journal: ${opts.edits} journaled edits …`);
  for (let s = 1; s <= opts.edits; s++) {
    seqs.push((await store.append(runId, { phase: 'pre_tool_batch', step: s, payload: { tool_call_count: 1 } })).seq);
    const rel = `f${(s * 37) % FILES}.txt`;
    const text = fs.readFileSync(path.join(root, rel), 'utf8');
    const line = (s * 13) % 20;
    const oldText = text.split('\n')[line]! + '\n';
    const newText = `line ${line} edited at step ${s}\n`;
    await journaledCall(
      journal,
      store,
      runId,
      s,
      editFile,
      { path: rel, old_text: oldText, new_text: newText, replace_all: false },
      root,
    );
    fileBytes.push(Buffer.byteLength(text));
    changed.push(Buffer.byteLength(oldText) + Buffer.byteLength(newText));
  }
  await store.flush();
  const storedTotal = dirBytes(path.join(storeDir, 'runs', runId)) - startBytes;
  const planAll: number[] = [];
  const planLast: number[] = [];
  let planAllFiles = 0;
  for (let r = 0; r < opts.rounds; r++) {
    let t = performance.now();
    planAllFiles = (await prepareRestore({ store, runId, toSeq: seqs[0]!, workspaceRoot: root })).files.length;
    planAll.push(performance.now() - t);
    t = performance.now();
    await prepareRestore({ store, runId, toSeq: seqs[seqs.length - 10]!, workspaceRoot: root });
    planLast.push(performance.now() - t);
  }
  await lease.release();
  await store.close();
  return {
    edits: opts.edits,
    files: FILES,
    storedBytesPerEdit: Math.round(storedTotal / opts.edits),
    fileBytesPerEdit: median(fileBytes),
    changedBytesPerEdit: median(changed),
    planAllMs: median(planAll),
    planAllFiles,
    planLast10Ms: median(planLast),
    scan: await measureScan(base, opts.scanFiles, opts.rounds),
  };
}

async function measureScan(base: string, count: number, rounds: number): Promise<ScanResult> {
  const ws = path.join(base, 'scan-workspace');
  log(`  file journal: generating a ${count.toLocaleString('en')}-file workspace …`);
  generateWorkspace(ws, count);
  let touched = 0;
  // 10 files in 10 folders, different ones each time (a folder holds 100).
  const touch = () => {
    const k = touched++;
    for (let i = 0; i < 10; i++)
      fs.appendFileSync(path.join(ws, 'pkg0', `mod${i}`, `file${i * 100 + k}.ts`), `// change ${k}\n`);
  };
  // Each journal keeps its index between commands, as the extension's (one per window) does.
  const watcher = new NodeWatcher(ws);
  const indexes: Record<ScanMode, WorkspaceIndex> = {
    watcher: new WorkspaceIndex({ root: ws, watcher }),
    none: new WorkspaceIndex({ root: ws }),
  };
  const journals: Record<ScanMode | 'status', FileChangeRecorder> = {
    watcher: new FileChangeRecorder({ workspaceRoot: ws, index: indexes.watcher }),
    none: new FileChangeRecorder({ workspaceRoot: ws, index: indexes.none }),
    // Shares the watcher's index: only the way git is asked differs.
    status: new FileChangeRecorder({ workspaceRoot: ws, index: indexes.watcher, git: 'status' }),
  };
  const noStore = { put: async (c: string | Uint8Array) => `${c.length}`.padStart(64, '0'), effects: async () => [] };
  const command = { command: 'echo bench', cwd: '.', timeout_ms: 60_000 };
  /** One command's journal (scan before, 10 changes, scan after); fails the bench unless exactly those 10 are found. */
  const journaled = async (mode: ScanMode | 'status', inGit = false): Promise<number> => {
    const t = performance.now();
    const watch = await journals[mode].watch(runCommand, command, noStore);
    touch();
    const out = await watch!.finish(undefined);
    const ms = performance.now() - t;
    if (out.files.length !== 10 || !out.file_scan?.complete)
      throw new Error(
        `the scan (${mode}) found ${out.files.length} changed files (${out.file_scan?.note ?? 'complete'})`,
      );
    // In the repository, every changed file was clean in git: its earlier content must come from git.
    const unknown = out.files.filter((f) => f.before.kind !== 'file');
    if (inGit && unknown.length > 0)
      throw new Error(
        `the journal (${mode}) did not get ${unknown[0]!.path} from git: ${JSON.stringify(unknown[0]!.before)}`,
      );
    return ms;
  };
  const ours = { watcher: [] as number[], none: [] as number[] };
  const oursGit = { watcher: [] as number[], none: [] as number[] };
  const oursGitStatus: number[] = [];
  const shadowNext: number[] = [];
  const shadowNextGit: number[] = [];
  // Shadow git, as the peers snapshot: a separate git dir whose work tree is the workspace.
  const shadow = path.join(base, 'shadow.git');
  const env = { GIT_DIR: shadow, GIT_WORK_TREE: ws };
  git(base, ['init', '-q', '--bare', shadow]);
  git(base, ['config', '--bool', 'core.bare', 'false'], env);
  /** One snapshot as the peers take it; its time. */
  const shadowSnapshot = (label: number | string): number => {
    const t = performance.now();
    git(ws, ['add', '-A'], env);
    git(ws, ['commit', '-q', '-m', `snapshot ${label}`, '--no-verify'], env);
    return performance.now() - t;
  };
  log('  file journal: shadow-git first snapshot …');
  const shadowFirstMs = shadowSnapshot('first');
  // The first scan of each index walks the tree (once per window); a command's scans come after.
  const t = performance.now();
  await indexes.none.before();
  const firstWalkMs = performance.now() - t;
  await indexes.watcher.before();
  // The files just written are racy (changed within the clock's granularity): one round to settle.
  await new Promise((r) => setTimeout(r, 1100));
  for (const mode of MODES) await journaled(mode);
  shadowSnapshot('warm-up');
  const loadBefore = os.loadavg()[0]!;
  // Interleaved, the modes' order alternating per round: load drifts hit all alike.
  const order = (r: number) => (r % 2 === 0 ? MODES : [...MODES].reverse());
  for (let r = 0; r < rounds; r++) {
    log(`  file journal: scan round ${r + 1}/${rounds} …`);
    for (const mode of order(r)) ours[mode].push(await journaled(mode));
    shadowNext.push(shadowSnapshot(r));
  }
  // The workspace as a repository of its own: the journal also asks git which files were clean.
  git(ws, ['init', '-q']);
  git(ws, ['add', '-A']);
  git(ws, ['commit', '-q', '-m', 'initial', '--no-verify']);
  // As a user's repository is: its index refreshed by their own git (or VS Code's git extension)
  // since the files were written. The journal never writes the index, so a racily clean index
  // would make every status re-read every file.
  await new Promise((r) => setTimeout(r, 1100));
  git(ws, ['status', '--porcelain']);
  // One command each first, as above: the indexes walk the tree again once it holds a .git (its rules changed).
  for (const mode of MODES) await journaled(mode, true);
  await journaled('status', true);
  shadowSnapshot('warm-up in the repository');
  for (let r = 0; r < rounds; r++) {
    for (const mode of order(r)) oursGit[mode].push(await journaled(mode, true));
    oursGitStatus.push(await journaled('status', true));
    // The peers' shadow git of this same workspace, side by side (its .git is skipped by both).
    shadowNextGit.push(shadowSnapshot(`${r} in the repository`));
  }
  for (const d of [indexes.watcher, indexes.none, watcher]) d.dispose();
  const med = (m: Record<ScanMode, number[]>) => ({ watcher: median(m.watcher), none: median(m.none) });
  return {
    files: count,
    oursMs: med(ours),
    oursGitMs: med(oursGit),
    oursGitStatusMs: median(oursGitStatus),
    firstWalkMs,
    shadowFirstMs,
    shadowNextMs: median(shadowNext),
    shadowNextGitMs: median(shadowNextGit),
    load: [loadBefore, os.loadavg()[0]!],
  };
}

export function fileJournalReport(r: FileJournalResult): string {
  const ms = (v: number) => `${v.toFixed(v < 10 ? 2 : 0)} ms`;
  const s = r.scan;
  return [
    '',
    '### File journal (restore files to a checkpoint)',
    '',
    '| figure | value |',
    '|---|---|',
    `| stored bytes per journaled edit (mean of ${r.edits}; blobs + log + its checkpoint) | ${r.storedBytesPerEdit.toLocaleString('en')} B (edited file: median ${r.fileBytesPerEdit.toLocaleString('en')} B; the edit: ${r.changedBytesPerEdit} B) |`,
    `| restore plan to the first checkpoint: ${r.edits} edits over ${r.planAllFiles} files reversed | ${ms(r.planAllMs)} |`,
    `| restore plan to 10 edits before the end | ${ms(r.planLast10Ms)} |`,
    `| command scan, ${s.files.toLocaleString('en')} files, 10 changed (all 10 found): ours, the index refreshed before and after — with a file watcher / without one | ${ms(s.oursMs.watcher)} / ${ms(s.oursMs.none)} |`,
    `| … ours when the workspace is a git repository (+ git's index read before, the 10 files' blobs after) — with a file watcher / without one | ${ms(s.oursGitMs.watcher)} / ${ms(s.oursGitMs.none)} |`,
    `| … ours in the git repository asking \`git status\` before instead (where the index is not read: Windows, a split index), with a file watcher | ${ms(s.oursGitStatusMs)} |`,
    `| … ours: the index's first walk of the tree (once per window) | ${ms(s.firstWalkMs)} |`,
    `| … shadow git (peers): first snapshot \`git add -A && git commit\` | ${ms(s.shadowFirstMs)} |`,
    `| … shadow git: next snapshot after the same 10 changes | ${ms(s.shadowNextMs)} |`,
    ...MODES.map(
      (m) =>
        `| ratio ours (${MODE_NAME[m]}) / shadow git next snapshot (first snapshot) | ${(s.oursMs[m] / s.shadowNextMs).toFixed(2)} (${(s.oursMs[m] / s.shadowFirstMs).toFixed(3)}) |`,
    ),
    `| … shadow git: next snapshot, in the rounds where the workspace is a git repository | ${ms(s.shadowNextGitMs)} |`,
    `| ratio ours in the git repository (with a file watcher; without one) / shadow git next snapshot in those rounds | ${(s.oursGitMs.watcher / s.shadowNextGitMs).toFixed(2)}; ${(s.oursGitMs.none / s.shadowNextGitMs).toFixed(2)} |`,
    `| load average (1 min) when the scan rounds began / ended | ${s.load.map((l) => l.toFixed(1)).join(' / ')} |`,
  ].join('\n');
}
