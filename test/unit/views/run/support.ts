// Shared by the run view's unit tests.
import assert from 'node:assert/strict';
import type { CheckpointStore } from '../../../../src/store/api/types';
import { loadRunData } from '../../../../src/views/run/runData';
import { planRunItems } from '../../../../src/views/run/transcript';

export const idle = { isActive: () => false, runningCalls: () => new Set<string>() };

/** A plan from the newest `n` checkpoints is the end of the whole run's plan: the same keys, the same items. */
export async function assertNewestIsTheEnd(store: CheckpointStore, runId: string, limits: number[]): Promise<void> {
  const run = (await store.getRun(runId))!;
  const whole = planRunItems(await loadRunData(store, run, 1, idle));
  for (const n of limits) {
    const newest = await loadRunData(store, run, 1, idle, { newest: n });
    const end = planRunItems(newest);
    if (!newest.newestOnly) {
      assert.deepEqual(
        end.map((p) => p.key),
        whole.map((p) => p.key),
        `${n}: all of it`,
      );
      continue;
    }
    if (n >= 50) assert.ok(end.length > 0, `${n}: steps held whole`);
    const tail = whole.slice(whole.length - end.length);
    assert.deepEqual(
      end.map((p) => p.key),
      tail.map((p) => p.key),
      `the newest ${n} checkpoints plan the end`,
    );
    assert.deepEqual(
      end.map((p) => p.height),
      tail.map((p) => p.height),
    );
    assert.deepEqual(
      end.map((p) => p.build()),
      tail.map((p) => p.build()),
      `${n}: the same items`,
    );
  }
}
