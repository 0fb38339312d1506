// File reads are bounded (through the real runner): a FIFO is refused at once instead of waited on
// forever; a line range of a 1.5 GB file is read as a range, never the whole file; edit_file
// refuses a file over the read limit; Cancel ends a read in progress. The big files are sparse
// (truncate): cheap to make, and read back as zeros.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DEMO_MODEL_ID } from '../../fixtures/modelServer/scenario';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { makeRunner } from '../loop/support';
import { rmrf, tmpDir, waitFor } from './helpers';

const AUTO = { read: 'auto', write: 'auto', command: 'ask', subagent: 'auto' } as const;
const BIG = 1.5 * 1024 ** 3;
/**
 * Memory growth allowed while a 1.5 GB file is touched: reading it whole grows the host by 1.5 GB;
 * a range holds at most the 10 MB read cap plus one 1 MB chunk, and the collector may keep a few
 * dozen freed chunks before it runs. 256 MB keeps a factor of six between the two.
 */
const MAX_GROWTH = 256 * 1024 ** 2;

type Call = { name: string; arguments: Record<string, unknown> };

async function batchServer(calls: Call[]): Promise<ModelServer> {
  return startModelServer({
    scenario: {
      name: 'bounded-reads',
      description: 'offline demo model: one batch',
      model: DEMO_MODEL_ID,
      turns: [{ reply: { content: null, tool_calls: calls } }, { reply: { content: 'done' } }],
      subconversations: [],
    },
  });
}

function toolAnswers(server: ModelServer): string[] {
  return (server.requests.at(-1)?.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content ?? '');
}

/** The largest growth of the process's resident memory while it runs, sampled every 5 ms. */
function memoryGrowth(): { stop(): number } {
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage().rss) - base;
    },
  };
}

/** `p`, or a failure once `ms` have passed without it settling. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('file reads are bounded (the real runner)', () => {
  let ws: string;
  let server: ModelServer | undefined;
  beforeEach(() => {
    ws = tmpDir('aw-bounded-');
  });
  afterEach(async () => {
    // A reader still blocked in open() of the FIFO (code that waits on it) gets its end of file.
    const fifo = path.join(ws, 'pipe');
    if (fs.existsSync(fifo)) {
      try {
        fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
      } catch {
        // nobody reading it
      }
    }
    await server?.close();
    server = undefined;
    rmrf(ws);
  });

  it('read_file and edit_file on a FIFO are refused at once, saying what it is', async () => {
    execFileSync('mkfifo', [path.join(ws, 'pipe')]);
    server = await batchServer([
      { name: 'read_file', arguments: { path: 'pipe' } },
      { name: 'read_file', arguments: { path: 'pipe', start_line: 1, end_line: 2 } },
      { name: 'edit_file', arguments: { path: 'pipe', old_text: 'a', new_text: 'b' } },
    ]);
    const { runner } = makeRunner({ baseURL: server.url, workspace: ws, policy: { categories: AUTO } });
    const h = await runner.start({ task: 'fifo' });
    // A FIFO's open() waits for a writer: without the fix the run never ends.
    assert.equal((await within(h.done, 10_000, 'the run')).state, 'completed');
    const answers = toolAnswers(server);
    assert.equal(answers.length, 3);
    for (const a of answers)
      assert.match(a, /^"pipe" is a FIFO \(named pipe\), not a regular file; (read|edit)_file works/);
  });

  it('a line range of a 1.5 GB file is read as a range; edit_file refuses the file; memory stays bounded', async () => {
    const big = path.join(ws, 'big.log');
    fs.writeFileSync(big, 'first\nsecond\nthird\n');
    fs.truncateSync(big, BIG); // the rest: a hole of zeros, one giant line
    server = await batchServer([
      { name: 'read_file', arguments: { path: 'big.log', start_line: 2, end_line: 3 } },
      { name: 'edit_file', arguments: { path: 'big.log', old_text: 'second', new_text: 'changed' } },
    ]);
    const { runner } = makeRunner({ baseURL: server.url, workspace: ws, policy: { categories: AUTO } });
    const memory = memoryGrowth();
    const h = await runner.start({ task: 'big' });
    const outcome = await h.done;
    const growth = memory.stop();
    assert.equal(outcome.state, 'completed');
    const [range, edit] = toolAnswers(server);
    assert.equal(range, 'second\nthird\n');
    assert.match(
      edit!,
      /^"big\.log" is 1610612736 bytes, over the 10485760-byte limit of edit_file; the file was not changed/,
    );
    assert.ok(growth < MAX_GROWTH, `memory grew by ${Math.round(growth / 1024 ** 2)} MB`);
    assert.equal(fs.statSync(big).size, BIG);
  });

  it('Cancel ends a read in progress (a range past a 1.5 GB line): the run stops, memory stays bounded', async () => {
    const big = path.join(ws, 'one-line.bin');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, BIG);
    server = await batchServer([{ name: 'read_file', arguments: { path: 'one-line.bin', start_line: 2 } }]);
    const { runner } = makeRunner({ baseURL: server.url, workspace: ws, policy: { categories: AUTO } });
    const memory = memoryGrowth();
    let started = false;
    runner.events.on((e) => void (e.type === 'tool' && e.status === 'start' && (started = true)));
    const h = await runner.start({ task: 'cancel' });
    await waitFor(() => started && isOpen(big) !== false, 10_000); // the read has begun
    runner.cancel(h.runId);
    const outcome = await within(h.done, 10_000, 'the cancelled run');
    const growth = memory.stop();
    assert.equal(outcome.state, 'paused_cancelled');
    assert.ok(growth < MAX_GROWTH, `memory grew by ${Math.round(growth / 1024 ** 2)} MB`);
    await waitFor(() => isOpen(big) !== true, 10_000); // and the file was closed
  });
});

/** Whether this process has `file` open; null where /proc does not show it (the tool's start stands for it). */
function isOpen(file: string): boolean | null {
  if (!fs.existsSync('/proc/self/fd')) return null;
  return fs.readdirSync('/proc/self/fd').some((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  });
}
