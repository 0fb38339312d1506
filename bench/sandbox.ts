// The OS sandbox's cost per command (src/runner/sandbox): a trivial command through the real
// run_command, sandboxed and not, interleaved in one process — the workspace's map, bubblewrap's
// setup, the seccomp program, the placeholders, on top of the same launch. Both launches: a line
// the policy read (the argv runner) and one the user approved (the shell), and the shell once more
// with the proxy, as "auto in sandbox" runs every command (it reports the domains a command
// wanted). Beside them, the workspace's map alone. Medians and p95s; nothing asserted. On a
// machine without the sandbox the rows say why instead.
import fs from 'node:fs';
import path from 'node:path';
import { COMMAND_POLICY, unavailable, type SandboxProfile } from '../src/runner/sandbox';
import { workspaceLayout } from '../src/runner/sandbox/layout';
import { createCodingRegistry, type ToolContext } from '../src/runner/tools';
import { median, p95 } from './stats';

export interface SandboxBenchOptions {
  dir: string;
  rounds: number;
  log(m: string): void;
}

interface Figure {
  medianMs: number;
  p95Ms: number;
}

export interface SandboxBenchResult {
  /** Why there is no sandbox here, or null. */
  unavailable: string | null;
  rounds: number;
  /** Folders in the workspace the sandbox maps before each command (a small project's). */
  folders: number;
  rows: Array<{ label: string; plain: Figure; sandboxed: Figure }>;
  /** Mapping the workspace alone (part of every sandboxed row): its folders revalidated, or read. */
  map: Figure | null;
}

const CASES = [
  { label: '`true`, a line the policy read (argv runner)', command: 'true', approvedBy: 'policy' as const },
  { label: '`echo hi`, a line the user approved (shell)', command: 'echo hi', approvedBy: 'user' as const },
  {
    label: '`echo hi`, the shell, with the proxy (auto in sandbox)',
    command: 'echo hi',
    approvedBy: 'user' as const,
    proxy: true,
  },
];

/** A small project: a repository with a few protected paths, 200 folders of sources. */
function makeWorkspace(root: string): number {
  fs.mkdirSync(path.join(root, '.git/hooks'), { recursive: true });
  fs.mkdirSync(path.join(root, '.vscode'));
  fs.writeFileSync(path.join(root, '.env'), 'KEY=1\n');
  let folders = 2;
  for (let i = 0; i < 20; i++)
    for (let j = 0; j < 10; j++) {
      const d = path.join(root, 'src', `pkg${i}`, `mod${j}`);
      fs.mkdirSync(d, { recursive: true });
      fs.writeFileSync(path.join(d, 'index.ts'), 'export {};\n');
      folders++;
    }
  return folders;
}

export async function measureSandbox(opts: SandboxBenchOptions): Promise<SandboxBenchResult> {
  const why = unavailable();
  if (why) return { unavailable: why, rounds: 0, folders: 0, rows: [], map: null };
  const root = fs.realpathSync(fs.mkdtempSync(path.join(opts.dir, 'sandbox-')));
  try {
    const folders = makeWorkspace(root);
    const registry = createCodingRegistry();
    const profile: SandboxProfile = { ...COMMAND_POLICY, workspaceRoot: root };
    const base: ToolContext = {
      workspaceRoot: root,
      signal: new AbortController().signal,
      idempotencyKey: 'bench',
      outputCap: 32 * 1024,
    };
    const once = async (c: (typeof CASES)[number], sandbox: boolean, n: number): Promise<number> => {
      const boxed = 'proxy' in c ? { ...profile, reportDomains: true } : profile;
      const ctx = { ...base, approvedBy: c.approvedBy, ...(sandbox ? { sandbox: boxed } : {}) };
      const call = {
        id: `b${n}`,
        type: 'function' as const,
        function: { name: 'run_command', arguments: JSON.stringify({ command: c.command }) },
      };
      const t = performance.now();
      const r = await registry.execute(call, ctx);
      const ms = performance.now() - t;
      if (r.is_error) throw new Error(`the ${sandbox ? 'sandboxed' : 'plain'} command failed: ${r.output}`);
      return ms;
    };
    const samples = CASES.map(() => ({ plain: [] as number[], sandboxed: [] as number[] }));
    const maps: number[] = [];
    // Warm-up rounds (module loading, the grammar, the page cache), then interleaved, the order alternating.
    for (let r = -3; r < opts.rounds; r++) {
      if (r >= 0 && r % 10 === 0) opts.log(`  sandbox: round ${r + 1}/${opts.rounds} …`);
      for (const [i, c] of CASES.entries()) {
        const order = r % 2 === 0 ? [false, true] : [true, false];
        for (const sandbox of order) {
          const ms = await once(c, sandbox, r);
          if (r >= 0) samples[i]![sandbox ? 'sandboxed' : 'plain'].push(ms);
        }
      }
      const t = performance.now();
      await workspaceLayout(root, { writable: true });
      if (r >= 0) maps.push(performance.now() - t);
    }
    const fig = (s: number[]): Figure => ({ medianMs: median(s), p95Ms: p95(s) });
    return {
      unavailable: null,
      rounds: opts.rounds,
      folders,
      rows: CASES.map((c, i) => ({
        label: c.label,
        plain: fig(samples[i]!.plain),
        sandboxed: fig(samples[i]!.sandboxed),
      })),
      map: fig(maps),
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

export function sandboxBenchReport(r: SandboxBenchResult): string {
  const head = ['', '### Command sandbox (cost per command)', ''];
  if (r.unavailable) return [...head, `No sandbox on this machine: ${r.unavailable}.`].join('\n');
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  return [
    ...head,
    `run_command end to end, ${r.rounds} interleaved rounds, a workspace of ${r.folders} folders (goal: sandbox ≤ 50 ms median over unsandboxed)`,
    '',
    '| command | unsandboxed median / p95 | sandboxed median / p95 | sandbox cost (median) |',
    '|---|---|---|---|',
    ...r.rows.map(
      (x) =>
        `| ${x.label} | ${ms(x.plain.medianMs)} / ${ms(x.plain.p95Ms)} | ${ms(x.sandboxed.medianMs)} / ${ms(x.sandboxed.p95Ms)} | ${ms(x.sandboxed.medianMs - x.plain.medianMs)} |`,
    ),
    ...(r.map
      ? [
          `| of which: mapping the workspace (${r.folders} folders, unchanged ones kept) | — | ${ms(r.map.medianMs)} / ${ms(r.map.p95Ms)} | — |`,
        ]
      : []),
  ].join('\n');
}
