// Kill at every durable barrier (docs/design.md, "Durable barriers"): the append scenario (three
// side-effecting commands, one a step) and a batch scenario (a read-only call and two commands in one
// batch, whose intents go ahead with the response, then one more command) each run in a child
// process on the real disk store and are SIGKILLed just before the frame of each barrier is written
// and just after its fdatasync, then at random moments;
// a new process resumes it (deciding "may already have run" approvals the way a user who looks at the
// file would). Every trial must end with each side effect exactly once; the calls asked about again
// are exactly those whose results the barrier would have carried; otherwise the transcript is the
// uninterrupted run's, and no LLM call is repeated after a barrier carried its response.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { bundleScript } from '../../support/bundleChild';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type ScenarioInput } from '../../fixtures/modelServer/scenario';
import { openDiskStore } from '../../../src/store';
import { lines, tmp } from './support';

interface ChildResult {
  events: Record<string, unknown>[];
  signal: NodeJS.Signals | null;
  code: number | null;
}

let childJs = '';

function runChild(env: Record<string, string>): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [childJs], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('exit', (code, signal) => {
      const events = out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const failed = events.find((e) => e.event === 'error');
      if (failed) reject(new Error(`child failed: ${String(failed.message)}\n${err}`));
      else resolve({ events, signal, code });
    });
  });
}

interface Trial {
  store: string;
  workspace: string;
}

function newTrial(): Trial {
  return { store: tmp('crash-store'), workspace: tmp('crash-ws') };
}

async function runId(store: string): Promise<string> {
  const s = openDiskStore(store);
  try {
    const page = await s.listRuns();
    assert.equal(page.runs.length, 1, 'one run in the store');
    return page.runs[0]!.run_id;
  } finally {
    await s.close();
  }
}

/** Resume until done, deciding uncertain approvals like a user who checks log.txt. */
async function resumeToEnd(t: Trial, baseURL: string): Promise<{ rejected: number }> {
  let rejected = 0;
  const id = await runId(t.store);
  const env = { BASE_URL: baseURL, STORE_DIR: t.store, WORKSPACE: t.workspace, RUN_ID: id };
  let r = await runChild({ ...env, MODE: 'resume' });
  for (let i = 0; i < 10; i++) {
    const state = r.events.find((e) => e.event === 'done')?.state;
    if (state === 'completed') return { rejected };
    assert.equal(state, 'awaiting_approval', `unexpected state ${String(state)}`);
    const s = openDiskStore(t.store);
    const pending = await s.listApprovals(id, { pendingOnly: true });
    await s.close();
    assert.ok(pending.length > 0 && pending.every((a) => a.uncertain), 'only uncertain effects come back to the user');
    const decisions = pending.map((a) => {
      const line = String((a.arguments as { command: string }).command).match(/step \d/)![0];
      const happened = lines(path.join(t.workspace, 'log.txt')).includes(line);
      if (happened) rejected += 1;
      return happened
        ? { kind: 'reject', toolCallId: a.tool_call_id, inputHash: a.input_hash, reason: 'it already ran' }
        : { kind: 'approve', toolCallId: a.tool_call_id, inputHash: a.input_hash };
    });
    r = await runChild({ ...env, MODE: 'decide', DECISIONS: JSON.stringify(decisions) });
  }
  throw new Error('run did not complete');
}

async function transcript(store: string): Promise<unknown[]> {
  const s = openDiskStore(store);
  try {
    const id = (await s.listRuns()).runs[0]!.run_id;
    return (await s.loadSnapshot(id))!.snapshot.messages.map((m) => ({ ...m }));
  } finally {
    await s.close();
  }
}

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

for (const [label, scenarioInput] of [
  ['one command a step', 'append'],
  ['two commands in one batch', BATCH],
] as const)
  describe(`agent loop: SIGKILL at every phase boundary, then resume in a new process (${label})`, function () {
    this.timeout(600_000);
    let server: ModelServer;
    let baseline: { barriers: { n: number; carries: string[] }[]; messages: unknown[] };

    /** Starts the run in a child on a fresh trial's store and workspace, with the kill `env` asks for. */
    const start = (t: Trial, env: Record<string, string> = {}) =>
      runChild({ MODE: 'start', BASE_URL: server.url, STORE_DIR: t.store, WORKSPACE: t.workspace, ...env });

    before(async () => {
      childJs ||= await bundleScript(path.join(__dirname, 'crashChild.ts'));
    });
    before(async () => {
      server = await startModelServer({ scenario: scenarioInput });
      const t = newTrial();
      const r = await start(t);
      assert.equal(r.events.find((e) => e.event === 'done')?.state, 'completed');
      baseline = {
        barriers: r.events
          .filter((e) => e.event === 'barrier')
          .map((e) => ({ n: Number(e.n), carries: e.carries as string[] })),
        messages: await transcript(t.store),
      };
      assert.deepEqual(lines(path.join(t.workspace, 'log.txt')), ['step 1', 'step 2', 'step 3']);
    });
    after(async () => server?.close());

    it('kills just before and just after every durable barrier; each resume completes with each effect once', async () => {
      const matrix: string[] = [];
      // Steps with side effects cost at most 2 barriers: the response + the batch's intents, then the results + the
      // next step's start; no barrier carries an intent without the response, except an intent that could not go ahead.
      // (Letting the run go costs one more, not per step: the copy of its frames, segmentCopy.ts — killed around too.)
      const perStep = baseline.barriers.filter((b) => b.carries.includes('post_llm')).length;
      const copies = baseline.barriers.filter((b) => b.carries.includes('copy'));
      assert.deepEqual(
        copies.map((b) => b.n),
        [baseline.barriers.length],
        'one copy, when the finished run is let go',
      );
      assert.ok(
        baseline.barriers.length - copies.length <= 2 * perStep + 2,
        `barriers: ${JSON.stringify(baseline.barriers)}`,
      );
      for (const b of baseline.barriers)
        if (b.carries.includes('intent'))
          assert.ok(b.carries.includes('post_llm'), `intents ahead: ${JSON.stringify(b)}`);
      for (const b of baseline.barriers) {
        for (const when of ['before', 'after'] as const) {
          server.reset();
          const t = newTrial();
          const r = await start(t, { [when === 'before' ? 'KILL_BEFORE_BARRIER' : 'KILL_AFTER_BARRIER']: String(b.n) });
          assert.equal(r.signal, 'SIGKILL', `killed ${when} barrier ${b.n}`);
          const { rejected } = await resumeToEnd(t, server.url);
          const what = `${when} barrier ${b.n} [${b.carries.join(', ')}]`;
          assert.deepEqual(lines(path.join(t.workspace, 'log.txt')), ['step 1', 'step 2', 'step 3'], `${what}: once`);
          // What a kill leaves unrecorded: before a barrier, the results it would have carried (the user is asked
          // about those calls and declines: they ran); a kill while a command runs may leave it either way.
          const midCommand = b.carries.includes('process');
          const lostResults = when === 'before' ? b.carries.filter((c) => c === 'result').length : 0;
          if (!midCommand) {
            assert.equal(rejected, lostResults, `${what}: the calls asked about again are exactly those that ran`);
            if (lostResults === 0)
              assert.deepEqual(await transcript(t.store), baseline.messages, `${what}: the same transcript`);
          }
          // A response a barrier carried to disk is never requested again.
          const durable = baseline.barriers.filter((x) => x.n < b.n || (x.n === b.n && when === 'after'));
          const responses = durable.filter((x) => x.carries.includes('post_llm')).length;
          for (let pos = 0; pos < responses; pos++) {
            assert.equal(
              server.stats().per_turn[`main#${pos}`],
              1,
              `turn ${pos} requested once (${what}; requests ${JSON.stringify(server.stats())})`,
            );
          }
          matrix.push(
            `${what.padEnd(62)} → completed, effects once, ${rejected} asked and declined, ${server.stats().total} LLM requests`,
          );
        }
      }
      console.log(`      kill matrix (${matrix.length} kills):\n        ${matrix.join('\n        ')}`);
    });

    it('kills at random moments (seeded); each effect happens once or is surfaced as uncertain, never twice', async () => {
      let seed = 20261122;
      const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const trials = Number(process.env.AW_CRASH_RANDOM_TRIALS ?? 8);
      let surfaced = 0;
      for (let i = 0; i < trials; i++) {
        server.reset();
        const t = newTrial();
        const r = await start(t, { KILL_AFTER_MS: String(Math.floor(150 + rand() * 900)) });
        if (r.signal !== 'SIGKILL') continue; // finished before the timer: nothing to resume
        const { rejected } = await resumeToEnd(t, server.url);
        surfaced += rejected;
        assert.deepEqual(
          lines(path.join(t.workspace, 'log.txt')),
          ['step 1', 'step 2', 'step 3'],
          `trial ${i}: each effect exactly once`,
        );
        fs.rmSync(t.store, { recursive: true, force: true });
      }
      console.log(
        `      random kills: ${trials} trials, ${surfaced} effect(s) surfaced as uncertain and declined by the user`,
      );
    });
  });
