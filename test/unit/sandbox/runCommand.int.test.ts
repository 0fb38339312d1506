// run_command with `ctx.sandbox`, through the real registry and the real bubblewrap: both launches
// (the argv runner for a line the policy read, the shell for one the user approved) run inside;
// what the sandbox refused comes back as text for the model and as data; timeouts, cancel and
// the process group still end everything; a sandbox that cannot start runs nothing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { COMMAND_POLICY, type SandboxProfile } from '../../../src/runner/sandbox';
import { createCodingRegistry, type ToolContext } from '../../../src/runner/tools';
import { EFFECT_ENV } from '../../../src/runner/tools/leftovers';
import type { ToolCall } from '../../../src/store/api/schema';
import { rmrf, tmpDir, toolCtx, waitFor } from '../runner/helpers';

const registry = createCodingRegistry();
const call = (args: unknown): ToolCall => ({
  id: 'call_sbx',
  type: 'function',
  function: { name: 'run_command', arguments: JSON.stringify(args) },
});

/** Host pids whose environment carries the command's marker. */
/** The program a process runs (its comm), or '' once it is gone. */
function comm(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

function marked(key: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`${EFFECT_ENV}=${key}\u0000`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('run_command in the sandbox (real bubblewrap)', () => {
  let root: string;
  let ctx: ToolContext;
  const profile = (over: Partial<SandboxProfile> = {}): SandboxProfile => ({
    ...COMMAND_POLICY,
    workspaceRoot: root,
    ...over,
  });
  const run = (args: unknown, c: Partial<ToolContext> = {}) => registry.execute(call(args), { ...ctx, ...c });

  beforeEach(() => {
    root = tmpDir('aw-sbx-cmd-');
    fs.mkdirSync(path.join(root, '.git/hooks'), { recursive: true });
    ctx = toolCtx(root, { sandbox: profile(), idempotencyKey: `sbx/${path.basename(root)}` });
  });
  afterEach(() => rmrf(root));

  it('runs a line the policy read through the argv runner, and one the user approved through the shell, inside', async () => {
    const a = await run({ command: 'cat /proc/1/cmdline' });
    assert.equal(a.is_error, false, a.output);
    assert.match(a.output, /bwrap/, "pid 1 is the sandbox's");
    const b = await run({ command: 'touch made && ls' }, { approvedBy: 'user' });
    assert.match(b.output, /^exit code: 0\n--- stdout ---\nmade\n/);
    assert.ok(fs.existsSync(path.join(root, 'made')), 'the workspace is writable');
    assert.deepEqual(fs.readdirSync(root).sort(), ['.git', 'made'], 'the placeholders are gone after the command');
    assert.deepEqual(b.sandbox, { writes: [], domains: [], unixSockets: false, processLimit: false, setupError: null });
  });

  it('reports a refused write as text for the model and as data, workspace-relative', async () => {
    const r = await run(
      { command: 'echo x > .git/hooks/pre-commit; echo y >> "$HOME/.bashrc"' },
      { approvedBy: 'user' },
    );
    assert.match(
      r.output,
      /^exit code: \d+\nsandbox blocked: write to \.git\/hooks\/pre-commit, .*\.bashrc \(read-only in the sandbox\)\n/,
    );
    assert.deepEqual(r.sandbox?.writes, ['.git/hooks/pre-commit', path.join(process.env.HOME!, '.bashrc')]);
    assert.equal(fs.existsSync(path.join(root, '.git/hooks/pre-commit')), false);
  });

  it('reports a refused domain with its host and port', async () => {
    const server = http.createServer((_q, s) => s.end('reached'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const r = await run(
        { command: `curl -sS -m 5 http://127.0.0.1:${port}/` },
        { sandbox: profile({ allowedDomains: ['registry.npmjs.org'] }) },
      );
      assert.doesNotMatch(r.output, /reached/);
      assert.match(r.output, new RegExp(`sandbox blocked: network: 127\\.0\\.0\\.1:${port} \\(not allowed\\)`));
      assert.equal(r.sandbox?.domains[0]?.host, '127.0.0.1');
      assert.equal(r.sandbox?.domains[0]?.port, port);
    } finally {
      server.close();
    }
  });

  it('with the proxy, the command is what the sandbox started: no helper process stays behind it', async () => {
    const r = await run(
      { command: 'cat /proc/$PPID/comm; echo "$HTTPS_PROXY"; set -- /proc/[0-9]*; echo $#' },
      { approvedBy: 'user', sandbox: profile({ reportDomains: true }) },
    );
    assert.equal(r.is_error, false, r.output);
    // The shell's parent is bubblewrap's init, and the two are all that run: the count is the shell's
    // own (a glob, no process of its own that may or may not be listed yet).
    assert.match(r.output, /--- stdout ---\nbwrap\nhttp:\/\/127\.0\.0\.1:3128\n2\n/);
  });

  for (const proxy of [false, true])
    it(`${proxy ? 'with the proxy, the helper' : 'the status shell'} sets the policy's limits; the command inherits no setup descriptor`, async () => {
      const limits = { processes: 300, memoryBytes: 3 * 1024 ** 3, tmpBytes: COMMAND_POLICY.limits.tmpBytes };
      const r = await run(
        {
          command:
            'grep -E "^Max (processes|data size)" /proc/self/limits; for fd in 3 4 5; do [ -e /proc/$$/fd/$fd ] && echo "fd $fd open"; done; python3 -c "import socket; socket.socket(socket.AF_UNIX)"',
        },
        { approvedBy: 'user', sandbox: profile({ reportDomains: proxy, limits }) },
      );
      // fd 3 took the seccomp program, 4 the status pipe, 5 the IPC channel (with the proxy).
      assert.match(
        r.output,
        /--- stdout ---\nMax data size +3221225472 +3221225472 +bytes *\nMax processes +300 +300 +processes *\n\n/,
      );
      assert.equal(r.sandbox?.unixSockets, true, 'a unix socket is still refused');
      assert.equal(r.sandbox?.setupError, null);
    });

  it("gives the command only the sandbox's environment and the call's marker", async () => {
    process.env.AW_TEST_API_KEY = 'sk-must-not-leak';
    try {
      const r = await run({ command: 'env' });
      assert.doesNotMatch(r.output, /sk-must-not-leak/);
      assert.match(r.output, new RegExp(`${EFFECT_ENV}=${ctx.idempotencyKey}`));
    } finally {
      delete process.env.AW_TEST_API_KEY;
    }
  });

  it('a timeout ends the whole sandbox, background processes included', async () => {
    const r = await run({ command: 'sleep 60 & sleep 60', timeout_ms: 500 }, { approvedBy: 'user' });
    assert.match(r.output, /^timed out after 500 ms; the process group was killed/);
    await waitFor(() => marked(ctx.idempotencyKey).length === 0, 10_000);
  });

  it('a cancel ends the whole sandbox, a setsid process included', async () => {
    const ac = new AbortController();
    const key = ctx.idempotencyKey;
    const pending = run({ command: 'setsid sleep 60 & sleep 60' }, { approvedBy: 'user', signal: ac.signal });
    // Both sleeps: the command has started (bubblewrap and its first shell carry the marker too).
    await waitFor(() => marked(key).filter((pid) => comm(pid) === 'sleep').length >= 2, 10_000);
    ac.abort();
    assert.match((await pending).output, /^cancelled; the process group was killed/);
    await waitFor(() => marked(key).length === 0, 10_000);
  });

  it('a cancel while the sandbox sets up says the command did not start, and it did not', async () => {
    const ac = new AbortController();
    // Long enough that its processes are seen, however fast the sandbox starts it.
    const pending = run({ command: 'touch ran && sleep 30' }, { approvedBy: 'user', signal: ac.signal });
    // As soon as the sandbox's first process exists: bubblewrap has yet to set everything up.
    while (marked(ctx.idempotencyKey).length === 0) await new Promise((r) => setImmediate(r));
    ac.abort();
    const r = await pending;
    const notStarted = /^cancelled while the sandbox was setting up; the command did not start/.test(r.output);
    assert.ok(notStarted || /^cancelled; the process group was killed/.test(r.output), r.output);
    assert.equal(r.is_error, true);
    if (notStarted) assert.equal(fs.existsSync(path.join(root, 'ran')), false, 'it said the command did not start');
  });

  it('a sandbox that cannot start runs nothing, and says so', async () => {
    const r = await run(
      { command: 'touch ran' },
      { approvedBy: 'user', sandbox: profile({ writable: ['/nonexistent-aw'] }) },
    );
    assert.equal(r.is_error, true);
    assert.match(
      r.output,
      /^Not run: the sandbox could not start the command \(Can't find source path \/nonexistent-aw/,
    );
    assert.equal(fs.existsSync(path.join(root, 'ran')), false);
  });

  it('a workspace holding the home folder is refused, not run unsandboxed', async () => {
    const home = process.env.HOME;
    process.env.HOME = path.join(root, 'home');
    try {
      const r = await run({ command: 'touch ran' }, { approvedBy: 'user' });
      assert.match(
        r.output,
        /^Not run: the sandbox could not start the command \(the workspace .* holds the home folder/,
      );
      assert.equal(fs.existsSync(path.join(root, 'ran')), false);
    } finally {
      process.env.HOME = home;
    }
  });

  it('a command that prints what looks like a setup failure is not taken for one', async () => {
    const r = await run({ command: 'echo "bwrap: Can\'t mount" >&2; exit 1' }, { approvedBy: 'user' });
    assert.match(r.output, /^exit code: 1\n/);
    assert.equal(r.sandbox?.setupError, null);
  });
});
