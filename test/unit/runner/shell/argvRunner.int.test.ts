// run_command's argv runner: a line the policy let through runs without a shell, with the shell's
// meaning of && || ; | and the accepted redirections, and everything run_command promises for any
// command (own process group killed on timeout, the effect marker, exit codes, captured output).
// A line the user approved runs through the shell as shown.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { ToolCall } from '../../../../src/store/api/schema';
import { createCodingRegistry, type ToolContext } from '../../../../src/runner/tools';
import { EFFECT_ENV } from '../../../../src/runner/tools/leftovers';
import { chooseLaunch } from '../../../../src/runner/tools/shell/launch';
import { rmrf, tmpDir, toolCtx } from '../helpers';

const registry = createCodingRegistry();
const call = (command: string, timeout_ms?: number): ToolCall => ({
  id: 'call_argv',
  type: 'function',
  function: { name: 'run_command', arguments: JSON.stringify({ command, timeout_ms }) },
});

/** Live processes whose environment carries this marker (Linux). */
function marked(key: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const stat = fs.readFileSync(`/proc/${n}/stat`, 'utf8');
        if (/^\d+ \(.*\) Z/.test(stat)) return false;
        return fs.readFileSync(`/proc/${n}/environ`, 'latin1').split('\0').includes(`${EFFECT_ENV}=${key}`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('runner/tools run_command: the argv runner', () => {
  let root: string;
  let ctx: ToolContext;
  const run = (command: string, over: Partial<ToolContext> = {}, timeout?: number) =>
    registry.execute(call(command, timeout), { ...ctx, ...over });
  beforeEach(() => {
    root = tmpDir();
    ctx = toolCtx(root, { approvedBy: 'policy' });
  });
  afterEach(() => rmrf(root));

  it('a plain line approved by the policy runs without a shell; a user-approved or non-plain one through it', async () => {
    assert.equal((await chooseLaunch('npm test && git status', 'policy', 'linux')).kind, 'argv');
    assert.equal((await chooseLaunch('npm test && git status', undefined, 'linux')).kind, 'argv');
    assert.equal((await chooseLaunch('npm test && git status', 'user', 'linux')).kind, 'shell');
    assert.equal((await chooseLaunch('npm test', 'policy', 'win32')).kind, 'shell');
    assert.equal((await chooseLaunch('echo $((1+2))', 'policy', 'linux')).kind, 'shell');
  });

  it('&& || and ; follow the shell: a failure skips &&, a success skips ||, ; always runs', async () => {
    const r = await run('false && echo skipped || echo fallback; true || echo skipped2; echo always');
    assert.equal(r.output, 'exit code: 0\n--- stdout ---\nfallback\nalways\n\n--- stderr ---\n');
    const failing = await run('echo first; false');
    assert.equal(failing.is_error, true);
    assert.match(failing.output, /^exit code: 1\n--- stdout ---\nfirst\n/);
  });

  it('pipes connect the stages; the pipeline status is the last stage', async () => {
    const r = await run("printf 'a\\nb\\nc\\n' | tail -n 1 | cat");
    assert.equal(r.output, 'exit code: 0\n--- stdout ---\nc\n\n--- stderr ---\n');
    assert.match((await run('false | true')).output, /^exit code: 0/);
    assert.match((await run('true | false')).output, /^exit code: 1/);
  });

  it('redirections: 2>&1 into stdout or the next stage, >&2, /dev/null, left to right', async () => {
    const missing = `${root}/missing`;
    const merged = await run(`ls ${missing} 2>&1`);
    assert.match(merged.output, /--- stdout ---\nls: cannot access .*missing.*\n\n--- stderr ---\n$/);
    assert.match((await run(`ls ${missing} 2>&1 | wc -l`)).output, /--- stdout ---\n1\n/);
    assert.match((await run('echo to-stderr >&2')).output, /--- stdout ---\n\n--- stderr ---\nto-stderr\n$/);
    assert.match((await run(`ls ${missing} 2>/dev/null`)).output, /--- stdout ---\n\n--- stderr ---\n$/);
    assert.match((await run(`ls ${missing} >/dev/null 2>&1`)).output, /--- stdout ---\n\n--- stderr ---\n$/);
    // 2>&1 first: stderr goes where stdout was (the capture), then stdout goes to /dev/null.
    assert.match((await run(`ls ${missing} 2>&1 >/dev/null`)).output, /--- stdout ---\nls: cannot access/);
  });

  it('a program that does not exist: status 127 and a message, as a shell says it', async () => {
    const r = await run('no-such-program-aw --x || echo fell-back');
    assert.equal(
      r.output,
      'exit code: 0\n--- stdout ---\nfell-back\n\n--- stderr ---\nno-such-program-aw: command not found\n',
    );
    assert.match((await run('no-such-program-aw')).output, /^exit code: 127/);
  });

  it('the programs get the effect marker and the original ELECTRON_RUN_AS_NODE (absent or set)', async () => {
    const saved = process.env.ELECTRON_RUN_AS_NODE;
    try {
      delete process.env.ELECTRON_RUN_AS_NODE;
      const plain = (await run('env')).output;
      assert.match(plain, new RegExp(`\\n${EFFECT_ENV}=run1/0/call_1\\n`));
      assert.doesNotMatch(plain, /ELECTRON_RUN_AS_NODE/);
      process.env.ELECTRON_RUN_AS_NODE = 'yes';
      assert.match((await run('env')).output, /\nELECTRON_RUN_AS_NODE=yes\n/);
    } finally {
      if (saved === undefined) delete process.env.ELECTRON_RUN_AS_NODE;
      else process.env.ELECTRON_RUN_AS_NODE = saved;
    }
  });

  it('leads its own process group: a timeout kills every stage; the recorded pid is the group leader', async () => {
    const leaders: boolean[] = [];
    const key = `argv-${process.pid}-${Date.now()}`;
    // Field 5 of /proc/<pid>/stat is the process group: the recorded pid leads its own.
    const onSpawn = (pid: number) =>
      leaders.push(
        fs
          .readFileSync(`/proc/${pid}/stat`, 'utf8')
          .replace(/^.*\) /, '')
          .split(' ')[2] === String(pid),
      );
    const t0 = Date.now();
    const r = await run('sleep 30 | sleep 31', { idempotencyKey: key, onSpawn }, 300);
    assert.ok(Date.now() - t0 < 6000, 'returns soon after the timeout');
    assert.match(r.output, /^timed out after 300 ms; the process group was killed/);
    assert.deepEqual(leaders, [true]);
    for (let i = 0; i < 50 && marked(key).length > 0; i++) await new Promise((res) => setTimeout(res, 100));
    assert.deepEqual(marked(key), [], 'no stage is left running');
  });
});
