// A workspace whose git configuration names programs, as a hostile repository (or an archive of
// one) ships it: every program is a trap that writes a line to a marker file outside the workspace,
// so a test sees at once whether any ran. And the real runner driving scripted run_command calls
// over HTTP with an allow list (test/unit/loop/support.ts makeRunner), writes and commands on ask.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer } from '../../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../../fixtures/modelServer/scenario';
import type { Approval } from '../../../../src/store/api/schema';
import { makeRunner, tmp } from '../../loop/support';
import { git, writtenBeforeGitLooks } from '../files/journalSupport';

export interface Traps {
  /** The marker file: a line per program that ran. */
  marker: string;
  /** A command line that runs a trap, labelled. */
  cmd(label: string): string;
  /** What ran so far (labels). */
  ran(): string[];
}

export function traps(): Traps {
  const dir = tmp('traps');
  const marker = path.join(dir, 'RAN');
  const script = path.join(dir, 'trap.sh');
  // Passes stdin through, as a filter or an fsmonitor hook would answer.
  fs.writeFileSync(script, `#!/bin/sh\necho "$1" >> '${marker}'\ncat\n`, { mode: 0o755 });
  return {
    marker,
    cmd: (label) => `${script} ${label}`,
    ran: () => (fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8').split('\n').filter(Boolean) : []),
  };
}

/** Sets every program-naming key of `config` (a git folder's config file) to a trap. */
function plant(gitDir: string, t: Traps, label: string): void {
  const set = (k: string, v: string) => git(gitDir, 'config', '--file', path.join(gitDir, 'config'), k, v);
  set('core.fsmonitor', t.cmd(`${label}-fsmonitor`));
  set('core.pager', t.cmd(`${label}-pager`));
  set('core.hooksPath', path.join(gitDir, 'hooks'));
  set('diff.external', t.cmd(`${label}-diff-external`));
  set('diff.d.textconv', t.cmd(`${label}-textconv`));
  set('filter.x.clean', t.cmd(`${label}-clean`));
  set('filter.x.smudge', t.cmd(`${label}-smudge`));
  set('filter.x.required', 'true');
  set('alias.st', `!${t.cmd(`${label}-alias`)}`);
  set('core.sshCommand', t.cmd(`${label}-ssh`));
  set('credential.helper', `!${t.cmd(`${label}-credential`)}`);
  fs.mkdirSync(path.join(gitDir, 'hooks'), { recursive: true });
  for (const hook of ['pre-commit', 'commit-msg', 'post-commit', 'post-index-change'])
    fs.writeFileSync(path.join(gitDir, 'hooks', hook), `#!/bin/sh\n${t.cmd(`${label}-hook-${hook}`)}\n`, {
      mode: 0o755,
    });
}

export interface Hostile {
  ws: string;
  traps: Traps;
}

/**
 * A repository with a commit and a.txt changed since, its own .git/config planted, `.gitattributes`
 * naming filter x and diff driver d for every file; and in it: `vendor/evil`, a bare repository
 * with a commit (planted, attributes in info/); `linked`, a folder whose `.git` file links to it;
 * `nested`, a repository of its own (planted).
 */
export function hostileWorkspace(): Hostile {
  const t = traps();
  const ws = tmp('hostile');
  fs.writeFileSync(path.join(ws, 'a.txt'), 'one\n');
  writtenBeforeGitLooks(path.join(ws, 'a.txt'));
  git(ws, 'init', '-q', '-b', 'main');
  git(ws, 'add', '-A');
  git(ws, 'commit', '-qm', 'initial');
  fs.writeFileSync(path.join(ws, '.gitattributes'), '* filter=x diff=d\n');

  const evil = path.join(ws, 'vendor/evil');
  git(ws, 'init', '-q', '--bare', '-b', 'main', evil);
  git(ws, 'push', '-q', evil, 'main');
  fs.mkdirSync(path.join(evil, 'info'), { recursive: true });
  fs.writeFileSync(path.join(evil, 'info/attributes'), '* filter=x diff=d\n');
  plant(evil, t, 'evil');
  fs.mkdirSync(path.join(ws, 'linked'));
  fs.writeFileSync(path.join(ws, 'linked/.git'), 'gitdir: ../vendor/evil\n');
  fs.writeFileSync(path.join(ws, 'linked/a.txt'), 'linked\n');

  const nested = path.join(ws, 'nested');
  fs.mkdirSync(nested);
  fs.writeFileSync(path.join(nested, 'n.txt'), 'n\n');
  git(nested, 'init', '-q');
  git(nested, 'add', '-A');
  git(nested, 'commit', '-qm', 'nested');
  fs.writeFileSync(path.join(nested, 'n.txt'), 'n changed\n');
  plant(path.join(nested, '.git'), t, 'nested');

  plant(path.join(ws, '.git'), t, 'root');
  fs.writeFileSync(path.join(ws, 'a.txt'), 'one\ntwo\n'); // changed now: racy, so git status looks into it
  return { ws, traps: t };
}

export type RunCall = { command: string; cwd?: string };

export interface Ran {
  state: string;
  /** Each call's output (by index), for the calls that ran. */
  outputs: (string | undefined)[];
  /** The approvals left waiting, by call index. */
  pending: Map<number, Approval>;
}

/** The real runner over `calls` as one batch of run_command calls, with `allow` as the allow list. */
export async function runCalls(ws: string, allow: string[], calls: RunCall[]): Promise<Ran> {
  const id = (i: number) => `call_${i}`;
  const scenario: Scenario = {
    name: 'allow-listed commands',
    description: 'offline demo model: allow-listed commands in a hostile repository',
    model: DEMO_MODEL_ID,
    subconversations: [],
    turns: [
      {
        reply: {
          content: null,
          tool_calls: calls.map((c, i) => ({ id: id(i), name: 'run_command', arguments: { ...c } })),
        },
      },
      { reply: { content: 'done' } },
    ],
  };
  const server = await startModelServer({ scenario });
  try {
    const r = makeRunner({ baseURL: server.url, workspace: ws, policy: { commandAllow: allow } });
    const h = await r.runner.start({ task: 'look at the repository' });
    const out = await h.done;
    const messages = (await r.store.loadSnapshot(h.runId)).snapshot.messages;
    const outputs = calls.map(
      (_, i) => messages.find((m) => m.role === 'tool' && m.tool_call_id === id(i))?.content as string | undefined,
    );
    const approvals = await r.store.listApprovals(h.runId, { pendingOnly: true });
    const pending = new Map(approvals.map((a) => [Number(a.tool_call_id.slice(5)), a]));
    return { state: out.state, outputs, pending };
  } finally {
    await server.close();
  }
}

/** Asserts that no trap ran. */
export function noTrapRan(t: Traps, context: string): void {
  assert.deepEqual(t.ran(), [], `no program the repository's configuration names ran (${context})`);
}
