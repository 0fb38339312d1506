// The runs tree's model: runs grouped into threads (a follow-up joins its run's thread, a fork
// starts its own) and a run's checkpoints paged in whole steps, so a 1000-step run's node opens
// without reading its history at once (that run: treeModel.int.test.ts).
import assert from 'node:assert/strict';
import { startModelServer, type ModelServer } from '../../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../../fixtures/modelServer/scenario';
import { createMemoryStore } from '../../../../src/store';
import type { RunSummary } from '../../../../src/store/api/schema';
import type { CheckpointStore } from '../../../../src/store/api/types';
import { RUN_PAGE, RunsTreeModel } from '../../../../src/views/runs/treeModel';
import { groupThreads, threadGroup } from '../../../../src/views/runs/threads';
import { makeRunner, owner } from '../../loop/support';
import { waitFor } from '../../runner/helpers';
import * as h from '../../store/helpers';

const TWO_TURNS: Scenario = {
  name: 'tree-threads',
  description: 'offline demo model: an answer, then a follow-up answered',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [{ reply: { content: 'First answer.' } }, { reply: { content: 'Follow-up answered.' } }],
};

describe('runs tree: threads', function () {
  this.timeout(30_000);
  let server: ModelServer;
  beforeEach(async () => (server = await startModelServer({ scenario: TWO_TURNS })));
  afterEach(async () => server.close());

  it('a follow-up joins its run’s thread as turn 2; a fork is a thread of its own; a thread is listed under its latest run’s group', async () => {
    const t = makeRunner({ baseURL: server.url });
    const first = await t.runner.start({ task: 'Answer once' });
    assert.equal((await first.done).state, 'completed');
    const out = await t.runner.send(first.runId, 'And again');
    assert.equal(out.kind, 'follow-up');
    if (out.kind === 'follow-up') assert.equal((await out.handle.done).state, 'completed');
    const source = (await t.store.list(first.runId, { limit: 10 })).find((r) => r.phase === 'post_llm')!;
    const { run: fork, lease } = await t.store.fork(first.runId, source.seq, owner());
    await t.store.setRunState(fork.run_id, 'paused_cancelled', 'forked'); // as the Fork command leaves it
    await lease.release();

    const threads = groupThreads((await t.store.listRuns()).runs);
    assert.equal(threads.length, 2, 'the conversation and the fork');
    const conversation = threads.find((th) => th.runs.length === 2)!;
    assert.deepEqual(
      conversation.runs.map((r) => r.run_id),
      [first.runId, out.runId],
      'turn 1, then turn 2',
    );
    assert.equal(conversation.id, (await t.store.getRun(first.runId))!.thread_id);
    assert.equal(conversation.group, 'finished');
    const forked = threads.find((th) => th.runs.length === 1)!;
    assert.equal(forked.runs[0]!.run_id, fork.run_id);
    assert.equal(forked.id, fork.run_id, 'the fork’s thread id is its own run id');
    assert.equal(forked.group, 'attention', 'a fork waits to be resumed');
    assert.equal(threads[0]!.id, forked.id, 'most recently updated thread first');
  });

  it('an approval waiting in an older turn keeps the thread under "Needs attention"', () => {
    const run = (id: string, over: Partial<RunSummary>): RunSummary => ({
      run_id: id,
      thread_id: 't',
      title: id,
      task: id,
      agent_name: 'a',
      model: 'm',
      created_ms: 0,
      forked_from: null,
      parent_run_id: null,
      state: 'completed',
      state_detail: null,
      step: 1,
      last_seq: 3,
      last_phase: null,
      updated_ms: 0,
      pending_approvals: 0,
      ...over,
    });
    assert.equal(threadGroup([run('a', { created_ms: 1 }), run('b', { created_ms: 2 })]), 'finished');
    assert.equal(
      threadGroup([run('a', { state: 'awaiting_approval', pending_approvals: 1 }), run('b', { created_ms: 2 })]),
      'attention',
    );
    assert.equal(threadGroup([run('a', {}), run('b', { state: 'running' })]), 'running');
  });
});

describe('runs tree: live pages', () => {
  it('a checkpoint written while a run’s first page is read is shown once the run’s summary says so', async () => {
    const mem = createMemoryStore();
    const { run, lease } = await mem.createRun(h.newRun('racing'), owner());
    await mem.append(run.run_id, h.runStarted());
    let raced = false;
    // The first list() returns, then a checkpoint lands before the model has kept the page.
    const racing = new Proxy(mem, {
      get(target, key) {
        if (key === 'list') {
          return async (...args: Parameters<CheckpointStore['list']>) => {
            const out = await target.list(...args);
            if (!raced) {
              raced = true;
              await target.append(run.run_id, h.stepStarted(h.snapshot(1, [{ role: 'user', content: 'go' }])));
            }
            return out;
          };
        }
        const v = Reflect.get(target, key);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const model = new RunsTreeModel(racing);
    try {
      await model.load();
      await model.steps(run.run_id);
      await new Promise((r) => setTimeout(r, 100)); // the store's event has refreshed the summary
      assert.deepEqual(
        (await model.steps(run.run_id)).steps.map((s) => s.step),
        [1, 0],
      );
    } finally {
      model.dispose();
      await lease.release();
    }
  });
});

describe('runs tree: a run deleted while its summary is read', () => {
  it('stays gone: the summary read before the deletion does not bring it back', async () => {
    const mem = createMemoryStore();
    const { run, lease } = await mem.createRun(h.newRun('deleted-meanwhile'), owner());
    await mem.append(run.run_id, h.runStarted());
    await lease.release();
    let read: Promise<unknown> | undefined;
    // The tree's refresh reads the run's summary; the run is deleted before that read returns.
    const racing = new Proxy(mem, {
      get(target, key) {
        if (key === 'getRun') {
          return (runId: string) =>
            (read ??= (async () => {
              const summary = await target.getRun(runId);
              await target.deleteRun(runId);
              return summary;
            })());
        }
        const v = Reflect.get(target, key);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const model = new RunsTreeModel(racing);
    try {
      await model.load();
      assert.ok(model.get(run.run_id), 'listed before');
      const again = await mem.acquire(run.run_id, owner());
      await mem.setRunState(run.run_id, 'paused_cancelled', 'a change the tree refreshes'); // → getRun
      await again.release();
      assert.ok(read, 'the change made the tree read the summary');
      assert.ok(await read, 'the read returned the summary as it was before the deletion');
      await new Promise((r) => setImmediate(r)); // the refresh's continuation after the read
      assert.equal(await mem.getRun(run.run_id), undefined, 'deleted in the store');
      assert.equal(model.get(run.run_id), undefined, 'and gone from the tree');
      assert.deepEqual(
        model.all().map((r) => r.run_id),
        [],
      );
    } finally {
      model.dispose();
    }
  });
});

describe('runs tree: a run deleted while the list is read', () => {
  it('stays gone: the page read before the deletion does not bring it back', async () => {
    const mem = createMemoryStore();
    const { run, lease } = await mem.createRun(h.newRun('deleted-while-listed'), owner());
    await mem.append(run.run_id, h.runStarted());
    await lease.release();
    let listedBefore: number | undefined;
    const racing = new Proxy(mem, {
      get(target, key) {
        if (key === 'listRuns') {
          return async (...args: Parameters<CheckpointStore['listRuns']>) => {
            const page = await target.listRuns(...args);
            if (listedBefore !== undefined) return page;
            listedBefore = page.runs.length; // the first page read; the run is deleted before it is handed over
            await target.deleteRun(run.run_id);
            return page;
          };
        }
        const v = Reflect.get(target, key);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const model = new RunsTreeModel(racing);
    try {
      await model.load();
      assert.equal(listedBefore, 1, 'the page was read with the run in it');
      assert.equal(model.get(run.run_id), undefined, 'the tree does not hold it');
    } finally {
      model.dispose();
    }
  });
});

describe('runs tree: a store of many runs', () => {
  it('reads the newest page and every unfinished run, however old — not every run; older ones a page at a time', async () => {
    let clock = 1_000_000;
    const mem = createMemoryStore({ now: () => ++clock });
    const make = async (title: string, state: 'completed' | 'interrupted' | 'paused_error') => {
      const { run, lease } = await mem.createRun(h.newRun(title), owner());
      await mem.setRunState(run.run_id, state, null);
      await lease.release();
      return run.run_id;
    };
    const oldInterrupted = await make('interrupted long ago', 'interrupted');
    const oldFinished = await make('finished long ago', 'completed');
    for (let i = 0; i < RUN_PAGE + 20; i++) await make(`run ${i}`, i === 5 ? 'paused_error' : 'completed');
    let summariesRead = 0;
    const counting = new Proxy(mem, {
      get(target, key) {
        if (key === 'listRuns')
          return async (...args: Parameters<CheckpointStore['listRuns']>) => {
            const page = await target.listRuns(...args);
            summariesRead += page.runs.length;
            return page;
          };
        const v = Reflect.get(target, key);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const model = new RunsTreeModel(counting);
    try {
      await model.load();
      assert.ok(
        summariesRead <= RUN_PAGE + 2,
        `read ${summariesRead} summaries: the first page and the unfinished runs`,
      );
      // What startup offers to resume and "Needs attention" lists come from the unfinished runs, however old.
      assert.equal(model.get(oldInterrupted)?.state, 'interrupted');
      assert.ok(model.threadsIn('attention').some((t) => t.latest.run_id === oldInterrupted));
      assert.equal(model.get(oldFinished), undefined, 'an old finished run waits for "Load more runs…"');
      // A command handed its id finds it all the same (from the store), and an id of no run is none.
      assert.equal((await model.find(oldFinished))?.title, 'finished long ago');
      assert.equal(await model.find('no-such-run'), undefined);
      assert.equal(await model.find('../not an id'), undefined);
      assert.equal(model.hasMoreRuns, true);
      await model.loadMoreRuns();
      assert.equal(model.get(oldFinished)?.state, 'completed');
      assert.equal(model.hasMoreRuns, false);
      assert.equal(model.all().length, RUN_PAGE + 22);
    } finally {
      model.dispose();
    }
  });

  it('the first page is shown before the older unfinished runs are read; when they come, the tree is told', async () => {
    const store = createMemoryStore();
    const made: string[] = [];
    for (const [title, state] of [
      ['paused long ago', 'paused_error'],
      ['done', 'completed'],
    ] as const) {
      const { run, lease } = await store.createRun(h.newRun(title), h.owner('w'));
      await store.setRunState(run.run_id, state, null);
      await lease.release();
      made.push(run.run_id);
    }
    // As a shared store of thousands of runs: the paused run is past the first page, and its own
    // listing answers when the test lets it.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = new Proxy(store, {
      get(target, key) {
        if (key === 'listRuns')
          return async (o: Parameters<CheckpointStore['listRuns']>[0] = {}) => {
            const page = await target.listRuns(o);
            if (o.states) await gate;
            return o.states ? page : { ...page, runs: page.runs.filter((r) => r.state === 'completed') };
          };
        const v = Reflect.get(target, key);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const model = new RunsTreeModel(slow);
    const told: (string | undefined)[] = [];
    model.onDidChange((id) => told.push(id));
    try {
      await model.loadFirstPage();
      assert.deepEqual(
        model.threadsIn('finished').map((t) => t.latest.title),
        ['done'],
      );
      assert.deepEqual(model.threadsIn('attention'), [], 'not read yet');
      release();
      await model.load();
      assert.deepEqual(
        model.threadsIn('attention').map((t) => t.latest.title),
        ['paused long ago'],
      );
      await waitFor(() => told.includes(undefined)); // the tree is told to show them
    } finally {
      model.dispose();
      await store.close();
    }
  });
});
