// run_command with real processes: exit codes, streams, timeouts that kill the whole process
// group, cancel, output cap + blob, cwd confinement.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { ToolCall } from '../../../src/store/api/schema';
import { createCodingRegistry, type ToolContext } from '../../../src/runner/tools';
import { alive, blobSink, rmrf, tmpDir, toolCtx } from './helpers';
import { scaled } from '../../support/timeScale';

const registry = createCodingRegistry();
const call = (args: unknown): ToolCall => ({
  id: 'call_cmd',
  type: 'function',
  function: { name: 'run_command', arguments: JSON.stringify(args) },
});

describe('runner/tools run_command', () => {
  let root: string;
  let ctx: ToolContext;
  const run = (args: unknown, c: ToolContext = ctx) => registry.execute(call(args), c);
  beforeEach(() => {
    root = tmpDir();
    ctx = toolCtx(root);
  });
  afterEach(() => rmrf(root));

  it('returns exit code, stdout and stderr; runs through the shell in the workspace', async () => {
    const r = await run({ command: 'echo out && echo err 1>&2 && pwd' });
    assert.equal(r.is_error, false);
    assert.equal(r.output, `exit code: 0\n--- stdout ---\nout\n${root}\n\n--- stderr ---\nerr\n`);
  });

  it('a non-zero exit code is reported and marks the result as an error', async () => {
    const r = await run({ command: 'echo failing; exit 3' });
    assert.equal(r.is_error, true);
    assert.match(r.output, /^exit code: 3\n--- stdout ---\nfailing\n/);
  });

  it('runs in a cwd inside the workspace; refuses a cwd outside or missing', async () => {
    fs.mkdirSync(path.join(root, 'sub'));
    assert.match((await run({ command: 'pwd', cwd: 'sub' })).output, new RegExp(`\\n${path.join(root, 'sub')}\\n`));
    assert.match((await run({ command: 'pwd', cwd: '..' })).output, /Path "\.\." is outside the workspace/);
    assert.match((await run({ command: 'pwd', cwd: 'nope' })).output, /cwd "nope" is not a directory/);
  });

  it('has no stdin: a command waiting for input gets EOF instead of hanging', async () => {
    const r = await run({ command: 'cat; echo after-eof', timeout_ms: 5000 });
    assert.match(r.output, /^exit code: 0\n--- stdout ---\nafter-eof\n/);
  });

  it('timeout kills the whole process group, including background children', async () => {
    const pidFile = path.join(root, 'child.pid');
    const t0 = Date.now();
    const timeout = scaled(300); // long enough for a loaded machine to start both sleeps
    const r = await run({ command: `sleep 30 & echo $! > ${pidFile}; sleep 30`, timeout_ms: timeout });
    assert.ok(Date.now() - t0 < timeout + scaled(5000), 'returns soon after the timeout');
    assert.equal(r.is_error, true);
    assert.match(r.output, new RegExp(`^timed out after ${timeout} ms; the process group was killed`));
    const childPid = Number(fs.readFileSync(pidFile, 'utf8'));
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(alive(childPid), false, 'the background sleep was killed too');
  });

  it('abort cancels a running command', async () => {
    const ac = new AbortController();
    const started = path.join(root, 'started');
    fs.rmSync(started, { force: true });
    // Cancelled once the command is running (a loaded machine can take longer than any fixed delay to start it).
    const poll = setInterval(() => fs.existsSync(started) && ac.abort(), 20);
    const r = await run({ command: `touch ${started}; sleep 30` }, { ...ctx, signal: ac.signal }).finally(() =>
      clearInterval(poll),
    );
    assert.equal(r.is_error, true);
    assert.match(r.output, /^cancelled; the process group was killed/);
  });

  it('caps output keeping head and tail; the full output goes to a blob', async () => {
    const sink = blobSink();
    const script = "for(let i=0;i<2000;i++) console.log('line '+i)";
    const r = await run({ command: `node -e "${script}"` }, { ...ctx, outputCap: 400, putBlob: sink.putBlob });
    assert.equal(r.is_error, false);
    assert.ok(r.blob);
    const full = sink.blobs.get(r.blob) ?? '';
    assert.match(full, /line 0\n[\s\S]*line 1999\n/);
    assert.ok(r.output.startsWith('exit code: 0\n--- stdout ---\nline 0\n'));
    assert.match(r.output, /line 1999\n\n--- stderr ---\n$/, 'the tail is kept');
    assert.match(
      r.output,
      new RegExp(
        `\\[output truncated: \\d+ of ${Buffer.byteLength(full)} bytes shown; full output in blob ${r.blob}\\]`,
      ),
    );
    assert.ok(Buffer.byteLength(r.output) < 400 + 200);
  });

  it('does not wait forever for a background process that keeps the pipes open', async () => {
    const t0 = Date.now();
    const pidFile = path.join(root, 'bg.pid');
    const r = await run({ command: `sleep 20 & echo $! > ${pidFile}; echo started`, timeout_ms: 20_000 });
    process.kill(Number(fs.readFileSync(pidFile, 'utf8'))); // our own leftover, started just above
    assert.match(r.output, /^exit code: 0\n--- stdout ---\nstarted\n/);
    assert.ok(Date.now() - t0 < 10_000);
  });
});
