// Shared by the run view's unit tests.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CheckpointStore, OwnerInfo } from '../../../../src/store/api/types';
import { RunViewController, type RunViewDeps } from '../../../../src/views/run/controller';
import { loadRunData } from '../../../../src/views/run/runData';
import { threadRuns } from '../../../../src/views/run/thread';
import { planRunItems } from '../../../../src/views/run/transcript';
import { BENCH_OWNER } from '../../../../bench/contenders/ours';
import { idleRunner, noEditor, testActions } from '../../../support/actions';
import { openWebview } from './webviewDom';

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

type TestRunner = RunViewDeps['runner'] & Parameters<typeof testActions>[0]['runner'];

/** The controller's dependencies as the extension builds them: the product's actions over `runner`. */
export function deps(
  store: CheckpointStore,
  o: { runner?: TestRunner; workspace?: string; owner?: OwnerInfo } = {},
): RunViewDeps {
  const runner: TestRunner = o.runner ?? idleRunner();
  const workspace = o.workspace ?? fs.mkdtempSync(path.join(os.tmpdir(), 'aw-webview-'));
  return {
    store,
    runner,
    threadRuns: (id) => threadRuns(store, id),
    actions: testActions({ store, runner, workspace, owner: o.owner ?? BENCH_OWNER }).actions,
    editor: noEditor,
    log: { info: () => undefined, warn: () => undefined },
  };
}

/** A view and its host, as a panel wires them (the host starts reading before the view is ready). */
export function open(threadId: string, runId: string, d: RunViewDeps, savedState?: unknown) {
  const ref: { controller?: RunViewController } = {};
  const sent: string[] = [];
  const view = openWebview({ toHost: (m) => void ref.controller?.receive(m), savedState });
  const controller = new RunViewController(threadId, runId, d, (m) => {
    sent.push(m.type === 'state' ? `state${m.partial ? ' partial' : ''}` : m.type);
    view.deliver(m);
  });
  ref.controller = controller;
  void controller.pushState(true);
  return { view, controller, sent, close: () => (controller.dispose(), view.close()) };
}
