// Crash at every durable barrier (docs/design.md, "Durable barriers"): the append scenario (three
// side-effecting commands, one a step) and a batch scenario (a read-only call and two commands in one
// batch, whose intents go ahead with the response, then one more command).
//
// The walk is in-process: one uninterrupted run on the real disk store, through an fs layer that copies
// the store and the workspace — as a SIGKILL right then leaves them, the page cache being the disk's —
// just before the frame of each barrier is written and just after its fdatasync. Each copy is then
// reopened by a new store and runner and resumed (deciding "may already have run" approvals the way a
// user who looks at the file would). Every crash must end with each side effect exactly once; the calls
// asked about again are exactly those whose results the barrier would have carried; otherwise the
// transcript is the uninterrupted run's, and no LLM call is repeated after a barrier carried its response.
// Per scenario one real SIGKILL of a child process at a barrier, and seeded random ones, keep the same
// proof for what only a dead process shows: its stale lock, its commands still running in a new process.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type ScenarioInput } from '../../fixtures/modelServer/scenario';
import { openDiskStore } from '../../../src/store';
import { trials } from '../../support/trials';
import { barrierFs, lines, makeRunner, tmp } from './support';
import { newTrial, resumeInChild, runId, startChild, transcript } from './crashSupport';

const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;
const EXPECTED = ['step 1', 'step 2', 'step 3'];

const append = (n: number) => ({ name: 'run_command', arguments: { command: `echo step ${n} >> log.txt` } });
/** Step 1: a read-only call, then two commands (their intents go ahead together); step 2: one command. */
const BATCH: ScenarioInput = {
  name: 'append-batch',
  description: 'offline demo model: two side-effecting calls in one batch, then one',
  model: DEMO_MODEL_ID,
  turns: [
    {
      reply: {
        content: 'Batch.',
        tool_calls: [{ name: 'list_files', arguments: { path: '.' } }, append(1), append(2)],
      },
    },
    { reply: { content: 'One more.', tool_calls: [append(3)] } },
    { reply: { content: 'Appended steps 1 to 3 to log.txt.' } },
  ],
};

interface Barrier {
  n: number;
  /** What the barrier's first frame and its last frame carried. */
  first: string[];
  carries: string[];
}

/** The store and workspace as a crash at one moment leaves them. */
interface Crash {
  when: 'before' | 'after';
  barrier: number;
  store: string;
  workspace: string;
  /** A command was running at that moment (it runs on, in a process group of its own, and finishes). */
  midCommand: boolean;
}

interface Baseline {
  barriers: Barrier[];
  messages: unknown[];
  workspace: string;
  crashes: Crash[];
}

/**
 * The uninterrupted run, in-process, noting what a crash just before and just after each barrier leaves:
 * the store then (its dead owner's locks dropped: a SIGKILL leaves them stale), and the workspace then —
 * or, when a command is running, once it has finished, as it does after its window's SIGKILL.
 */
async function baselineWithCrashes(server: ModelServer): Promise<Baseline> {
  const storeDir = tmp('crash-live');
  const workspace = tmp('crash-ws');
  const copies = tmp('crash-copies');
  const crashes: Crash[] = [];
  const barriers: Barrier[] = [];
  const firstFrames = new Map<number, string[]>();
  let running = 0;
  const whenIdle: (() => void)[] = [];
  const at = (when: Crash['when'], barrier: number) => {
    const c = { when, barrier, store: path.join(copies, `${when}-${barrier}`, 'store'), workspace: '' };
    fs.cpSync(storeDir, c.store, { recursive: true });
    const runs = path.join(c.store, 'runs');
    for (const id of fs.existsSync(runs) ? fs.readdirSync(runs) : [])
      fs.rmSync(path.join(runs, id, 'owner.lock'), { force: true });
    const copyWorkspace = () => {
      c.workspace = path.join(copies, `${when}-${barrier}`, 'ws');
      fs.cpSync(workspace, c.workspace, { recursive: true });
    };
    crashes.push(Object.assign(c, { midCommand: running > 0 }));
    if (running > 0) whenIdle.push(copyWorkspace);
    else copyWorkspace();
  };
  const { fs: fsl } = barrierFs({
    frame: (next, carries) => {
      if (firstFrames.has(next)) return;
      firstFrames.set(next, carries);
      at('before', next);
    },
    barrier: (n, _all, lastFrame) => {
      barriers.push({ n, first: firstFrames.get(n) ?? lastFrame, carries: lastFrame });
      at('after', n);
    },
  });
  const store = openDiskStore(storeDir, { fs: fsl });
  const { runner } = makeRunner({ baseURL: server.url, store, workspace, policy: AUTO });
  // The runner says so synchronously when a tool starts and when it has ended (its process gone).
  runner.events.on((e) => {
    if (e.type !== 'tool') return;
    running += e.status === 'start' ? 1 : -1;
    if (running === 0) for (const copy of whenIdle.splice(0)) copy();
  });
  const h = await runner.start({ task: 'append three lines', budget: { max_steps: 10 } });
  assert.equal((await h.done).state, 'completed');
  await store.close(); // lets the finished run go: its copy frame is a barrier too
  assert.deepEqual(lines(path.join(workspace, 'log.txt')), EXPECTED);
  assert.ok(
    crashes.every((c) => c.workspace && fs.existsSync(c.store)),
    'every crash has its store and its workspace',
  );
  return { barriers, messages: await transcript(storeDir), workspace, crashes };
}

/**
 * Resumes a crash's copy in this process with a new store and runner, until done: uncertain calls are
 * decided like a user who checks log.txt. The workspace goes back where the run had it (its paths are
 * the run's).
 */
async function resumeInProcess(
  c: Crash,
  workspace: string,
  server: ModelServer,
): Promise<{ rejected: number; state: string }> {
  fs.rmSync(workspace, { recursive: true, force: true });
  fs.cpSync(c.workspace, workspace, { recursive: true });
  const id = await runId(c.store);
  const store = openDiskStore(c.store);
  try {
    const { runner } = makeRunner({ baseURL: server.url, store, workspace, policy: AUTO });
    let out = await (await runner.resume(id)).done;
    let rejected = 0;
    for (let i = 0; i < 10 && out.state === 'awaiting_approval'; i++) {
      const pending = await store.listApprovals(id, { pendingOnly: true });
      assert.ok(
        pending.length > 0 && pending.every((a) => a.uncertain),
        'only uncertain effects come back to the user',
      );
      const seen = lines(path.join(workspace, 'log.txt'));
      const decisions = pending.map((a) => {
        const line = String((a.arguments as { command: string }).command).match(/step \d/)![0];
        if (!seen.includes(line))
          return { kind: 'approve', toolCallId: a.tool_call_id, inputHash: a.input_hash } as const;
        rejected += 1;
        return {
          kind: 'reject',
          toolCallId: a.tool_call_id,
          inputHash: a.input_hash,
          reason: 'it already ran',
        } as const;
      });
      const next = await runner.decideApprovals(id, decisions);
      out = next ? await next.done : out;
    }
    return { rejected, state: out.state };
  } finally {
    await store.close();
  }
}

for (const [label, scenarioInput] of [
  ['one command a step', 'append'],
  ['two commands in one batch', BATCH],
] as const)
  describe(`agent loop: a crash at every phase boundary, then resume (${label})`, function () {
    this.timeout(600_000);
    let server: ModelServer;
    let baseline: Baseline;

    before(async () => {
      server = await startModelServer({ scenario: scenarioInput });
      baseline = await baselineWithCrashes(server);
    });
    after(async () => server?.close());

    it('a crash just before and just after every durable barrier (in-process); each resume completes with each effect once', async () => {
      const { barriers } = baseline;
      // Steps with side effects cost at most 2 barriers: the response + the batch's intents, then the results + the
      // next step's start; no barrier carries an intent without the response, except an intent that could not go ahead.
      // (Letting the run go costs one more, not per step: the copy of its frames, segmentCopy.ts — crashed around too.)
      const perStep = barriers.filter((b) => b.carries.includes('post_llm')).length;
      const copies = barriers.filter((b) => b.carries.includes('copy'));
      assert.deepEqual(
        copies.map((b) => b.n),
        [barriers.length],
        'one copy, when the finished run is let go',
      );
      assert.ok(barriers.length - copies.length <= 2 * perStep + 2, `barriers: ${JSON.stringify(barriers)}`);
      for (const b of barriers)
        if (b.carries.includes('intent'))
          assert.ok(b.carries.includes('post_llm'), `intents ahead: ${JSON.stringify(b)}`);
      assert.equal(baseline.crashes.length, 2 * barriers.length, 'a crash before and after each barrier');

      const matrix: string[] = [];
      for (const b of barriers) {
        for (const when of ['before', 'after'] as const) {
          const crash = baseline.crashes.find((c) => c.when === when && c.barrier === b.n)!;
          server.reset();
          const { rejected, state } = await resumeInProcess(crash, baseline.workspace, server);
          const what = `${when} barrier ${b.n} [${b.carries.join(', ')}]`;
          assert.equal(state, 'completed', `${what}: completed`);
          assert.deepEqual(lines(path.join(baseline.workspace, 'log.txt')), EXPECTED, `${what}: once`);
          // What a crash leaves unrecorded: before a barrier, the results it would have carried. The user is asked
          // about exactly those calls and declines: they ran (a command running at the crash has finished by then).
          const lostResults = when === 'before' ? b.carries.filter((c) => c === 'result').length : 0;
          assert.equal(rejected, lostResults, `${what}: the calls asked about again are exactly those that ran`);
          if (lostResults === 0)
            assert.deepEqual(await transcript(crash.store), baseline.messages, `${what}: the same transcript`);
          // A response a barrier carried to disk is never requested again.
          const durable = barriers.filter((x) => x.n < b.n || (x.n === b.n && when === 'after'));
          const responses = durable.filter((x) => x.carries.includes('post_llm')).length;
          for (let pos = 0; pos < responses; pos++)
            assert.equal(
              server.stats().per_turn[`main#${pos}`] ?? 0,
              0,
              `turn ${pos} not requested again (${what}; requests ${JSON.stringify(server.stats())})`,
            );
          matrix.push(
            `${what.padEnd(62)}${crash.midCommand ? ' (mid-command)' : ''} → completed, effects once, ${rejected} asked and declined, ${server.stats().total} LLM requests`,
          );
        }
      }
      console.log(`      crash matrix (${matrix.length} crashes):\n        ${matrix.join('\n        ')}`);
    });

    it('a real SIGKILL just before the barrier that carries the first result, resumed in a new process: asked once, each effect once', async () => {
      const target = baseline.barriers.find((b) => b.carries.includes('result'))!;
      server.reset();
      const t = newTrial();
      const r = await startChild(server.url, t, { KILL_BEFORE_BARRIER: String(target.n) });
      assert.equal(r.signal, 'SIGKILL', `killed before barrier ${target.n}`);
      assert.deepEqual(
        r.events.find((e) => e.event === 'kill')?.carries,
        target.first,
        'the child met the same barrier as the in-process run',
      );
      const { rejected } = await resumeInChild(t, server.url);
      assert.deepEqual(lines(path.join(t.workspace, 'log.txt')), EXPECTED, 'each effect exactly once');
      assert.equal(
        rejected,
        target.carries.filter((c) => c === 'result').length,
        'asked about exactly the call that ran',
      );
      assert.equal(
        server.stats().per_turn['main#0'],
        1,
        'the first response, carried by an earlier barrier, was requested once',
      );
    });

    it('real SIGKILLs at random moments (seeded); each effect happens once or is surfaced as uncertain, never twice', async () => {
      let seed = 20261122;
      const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const count = trials(3, 'AW_CRASH_RANDOM_TRIALS');
      let surfaced = 0;
      for (let i = 0; i < count; i++) {
        server.reset();
        const t = newTrial();
        const r = await startChild(server.url, t, { KILL_AFTER_MS: String(Math.floor(150 + rand() * 900)) });
        if (r.signal !== 'SIGKILL') continue; // finished before the timer: nothing to resume
        const { rejected } = await resumeInChild(t, server.url);
        surfaced += rejected;
        assert.deepEqual(lines(path.join(t.workspace, 'log.txt')), EXPECTED, `trial ${i}: each effect exactly once`);
        fs.rmSync(t.store, { recursive: true, force: true });
      }
      console.log(
        `      random kills: ${count} trials, ${surfaced} effect(s) surfaced as uncertain and declined by the user`,
      );
    });
  });
