// The run index in memory (core/indexCache.ts): a run this store writes is followed, its entry built
// from the run when the index is read or saved — not at each op a step hands over — and saved within
// structuralMs when what a listing shows changed, within progressMs otherwise.
import assert from 'node:assert/strict';
import type { Engine } from '../../../src/store/core/engine';
import { IndexCache, type LiveRun } from '../../../src/store/core/indexCache';
import type { RunSummary } from '../../../src/store/api/schema';
import type { IndexEntry } from '../../../src/store/core/storedSchema';

/** A run in memory as the cache sees it, counting the summaries built from it. */
class FakeRun implements LiveRun {
  state: RunSummary['state'] = 'running';
  detail: string | null = null;
  pending = 0;
  step = 0;
  summaries = 0;
  readonly meta = { title: 'a run' };

  summary(): RunSummary {
    this.summaries++;
    return {
      run_id: 'r1',
      thread_id: 'r1',
      title: this.meta.title,
      task: 'do it',
      agent_name: 'coder',
      model: 'demo-model',
      created_ms: 1,
      forked_from: null,
      parent_run_id: null,
      state: this.state,
      state_detail: this.detail,
      step: this.step,
      last_seq: this.step,
      last_phase: null,
      updated_ms: 1 + this.step,
      pending_approvals: this.pending,
    };
  }
}

/** An engine that records what the cache saves (only saveIndex is called by it). */
function recordingEngine(): { engine: Engine; saved: IndexEntry[][] } {
  const saved: IndexEntry[][] = [];
  const engine = {
    saveIndex: async (entries: IndexEntry[]) => void saved.push(entries.map((e) => ({ ...e }))),
  } as unknown as Engine;
  return { engine, saved };
}

/** The delays the code under test asked setTimeout for while `fn` ran (its timers never fire). */
function timerDelays(fn: () => void): number[] {
  const delays: number[] = [];
  const real = globalThis.setTimeout;
  const timers: NodeJS.Timeout[] = [];
  globalThis.setTimeout = ((_cb: () => void, ms?: number) => {
    delays.push(ms ?? 0);
    const t = real(() => undefined, 2 ** 31 - 1);
    timers.push(t);
    return t;
  }) as typeof setTimeout;
  try {
    fn();
  } finally {
    globalThis.setTimeout = real;
    for (const t of timers) clearTimeout(t);
  }
  return delays;
}

describe('store: the run index in memory', () => {
  const STRUCTURAL = 200;
  const PROGRESS = 30_000;

  it('builds a followed run’s entry only when the index is read, as the run is then', () => {
    const { engine } = recordingEngine();
    const cache = new IndexCache(engine, STRUCTURAL, PROGRESS, () => undefined);
    const run = new FakeRun();
    timerDelays(() => {
      for (let i = 1; i <= 10; i++) {
        run.step = i;
        cache.follow(run, 'r1', i);
      }
    });
    assert.equal(run.summaries, 0, 'ten ops handed over build no summary');
    run.step = 11; // the run moved on after the last op: a listing shows it as it is now
    assert.equal(cache.get('r1')?.step, 11);
    assert.equal(cache.get('r1')?.durable_commits, 10);
    assert.equal(run.summaries, 1, 'built once, then kept');
    cache.stop();
  });

  it('lets go of a run once its entry is built: the entry stays as built until the run changes again', () => {
    const { engine } = recordingEngine();
    const cache = new IndexCache(engine, STRUCTURAL, PROGRESS, () => undefined);
    const run = new FakeRun();
    timerDelays(() => cache.follow(run, 'r1', 1));
    assert.equal([...cache.entries.values()].length, 1);
    run.step = 5; // changed without the cache being told: not followed any more
    assert.equal(cache.get('r1')?.step, 0);
    assert.equal(run.summaries, 1);
    timerDelays(() => cache.follow(run, 'r1', 2));
    assert.equal(cache.get('r1')?.step, 5);
    assert.equal(cache.get('r1')?.durable_commits, 2);
    cache.stop();
  });

  it('saves within structuralMs when state, approvals, title or detail change, within progressMs when only progress does', () => {
    const { engine } = recordingEngine();
    const cache = new IndexCache(engine, STRUCTURAL, PROGRESS, () => undefined);
    const run = new FakeRun();
    assert.deepEqual(
      timerDelays(() => cache.follow(run, 'r1', 1)),
      [STRUCTURAL],
      'a run new to the index: structural',
    );
    cache.stop();
    run.step = 1;
    assert.deepEqual(
      timerDelays(() => cache.follow(run, 'r1', 2)),
      [PROGRESS],
      'progress alone',
    );
    const changes: [string, () => void][] = [
      ['state', () => (run.state = 'paused_cancelled')],
      ['approvals', () => (run.pending = 1)],
      ['title', () => (run.meta.title = 'renamed')],
      ['detail', () => (run.detail = 'waiting for you')],
    ];
    for (const [what, change] of changes) {
      cache.stop();
      change();
      assert.deepEqual(
        timerDelays(() => cache.follow(run, 'r1', 3)),
        [STRUCTURAL],
        what,
      );
      cache.stop();
      assert.deepEqual(
        timerDelays(() => cache.follow(run, 'r1', 3)),
        [PROGRESS],
        `${what} unchanged since`,
      );
    }
    cache.stop();
  });

  it('saves every entry as the runs are when it saves; a set() or delete() stops following', async () => {
    const { engine, saved } = recordingEngine();
    const cache = new IndexCache(engine, STRUCTURAL, PROGRESS, () => undefined);
    const a = new FakeRun();
    timerDelays(() => cache.follow(a, 'r1', 1));
    a.step = 3;
    await cache.save();
    assert.deepEqual(
      saved.at(-1)?.map((e) => [e.run_id, e.step, e.durable_commits]),
      [['r1', 3, 1]],
    );
    timerDelays(() => cache.follow(a, 'r1', 2));
    timerDelays(() => cache.set({ ...a.summary(), step: 9 }, 7, false));
    a.step = 4;
    assert.equal(cache.get('r1')?.step, 9, 'set() replaced the followed run');
    timerDelays(() => cache.follow(a, 'r1', 8));
    timerDelays(() => cache.delete('r1'));
    assert.equal(cache.get('r1'), undefined);
    await cache.save();
    assert.deepEqual(saved.at(-1), []);
    cache.stop();
  });
  it('a save writes what an armed timer was for: the timer is cleared, and armed again only if the save fails', async () => {
    const { engine, saved } = recordingEngine();
    let fail = false;
    const failing = {
      saveIndex: async (entries: IndexEntry[]) => {
        if (fail) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
        return engine.saveIndex(entries);
      },
    } as unknown as Engine;
    const cache = new IndexCache(failing, STRUCTURAL, PROGRESS, () => undefined);
    const run = new FakeRun();
    const armed: { ms: number; cleared: boolean; t: NodeJS.Timeout }[] = [];
    const real = { set: globalThis.setTimeout, clear: globalThis.clearTimeout };
    globalThis.setTimeout = ((_cb: () => void, ms?: number) => {
      const t = real.set(() => undefined, 2 ** 31 - 1);
      armed.push({ ms: ms ?? 0, cleared: false, t });
      return t;
    }) as typeof setTimeout;
    globalThis.clearTimeout = ((t: NodeJS.Timeout) => {
      for (const a of armed) if (a.t === t) a.cleared = true;
      real.clear(t);
    }) as typeof clearTimeout;
    try {
      cache.follow(run, 'r1', 1); // new to the index: structural
      assert.deepEqual(
        armed.map((a) => [a.ms, a.cleared]),
        [[STRUCTURAL, false]],
      );
      await cache.save(); // a flush
      assert.equal(saved.length, 1);
      assert.deepEqual(
        armed.map((a) => [a.ms, a.cleared]),
        [[STRUCTURAL, true]],
        'nothing left for the structural timer to write: it would have written the same index again',
      );
      run.step = 1;
      cache.follow(run, 'r1', 2); // progress after the save arms a timer of its own
      assert.deepEqual(
        armed.map((a) => [a.ms, a.cleared]),
        [
          [STRUCTURAL, true],
          [PROGRESS, false],
        ],
      );
      fail = true;
      await assert.rejects(cache.save(), /no space left/);
      assert.equal(saved.length, 1);
      assert.equal(armed.length, 3, 'a failed save arms the timer again');
      assert.ok(armed[1]!.cleared && !armed[2]!.cleared);
      assert.ok(
        armed[2]!.ms > PROGRESS - 1000 && armed[2]!.ms <= PROGRESS,
        `armed for what was due (${armed[2]!.ms} ms)`,
      );
      fail = false;
      await cache.save();
      assert.equal(saved.length, 2, 'what failed is written by the next save');
      assert.equal(saved.at(-1)![0]!.step, 1);
    } finally {
      cache.stop();
      globalThis.setTimeout = real.set;
      globalThis.clearTimeout = real.clear;
    }
  });
});
