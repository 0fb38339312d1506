// The run view's webview code in a DOM (jsdom) against the real host controller: a long thread's
// end painted from the first state (no page request), pages read as the list scrolls, the position
// saved and restored by a view opened again; a waiting call approved in its card.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createMemoryStore } from '../../../../src/store';
import type { CheckpointStore } from '../../../../src/store/api/types';
import { RunViewController } from '../../../../src/views/run/controller';
import { BENCH_OWNER } from '../../../../bench/contenders/ours';
import { applyOp, Workload } from '../../../../bench/workload';
import { startModelServer } from '../../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../../fixtures/modelServer/scenario';
import { makeRunner } from '../../loop/support';
import { deps, open } from './support';
import { openWebview, untilDrawn, type WebviewInDom } from './webviewDom';

const rows = (v: WebviewInDom) =>
  [...v.document.querySelectorAll<HTMLElement>('.items > [data-key]:not(.placeholder)')].map((e) => e.dataset.key!);
const pageRequests = (v: WebviewInDom) => v.posted.filter((m) => m.method === 'page');

describe('run view webview in a DOM: a long thread', function () {
  this.timeout(60_000);
  const runId = 'long-run';
  let store: CheckpointStore;

  before(async () => {
    store = createMemoryStore();
    const workload = new Workload(7, runId);
    const { lease } = await store.createRun({ ...workload.runInput, run_id: runId }, BENCH_OWNER);
    await store.append(runId, workload.runStarted);
    for (let s = 0; s < 120; s++) for (const op of workload.nextStep().ops) await applyOp(store, runId, op);
    await store.setRunState(runId, 'completed', null);
    await lease.release();
  });
  after(async () => store.close());

  it('paints its end from the first state, with no page request; the whole outline follows; scrolled up, pages are read', async () => {
    const threadId = (await store.getRun(runId))!.thread_id;
    const { view, controller, sent, close } = open(threadId, runId, deps(store));
    try {
      await untilDrawn(view, 'the end of the thread', () => rows(view).includes(`${runId}:w:120`));
      assert.equal(sent[0], 'state partial', 'the end first, from the newest checkpoints');
      assert.equal(pageRequests(view).length, 0, 'its items came with the state');
      await untilDrawn(view, 'the whole outline', () => view.app.state().host?.partial === false);
      const all = controller.transcript.outline().length;
      assert.ok(all > 400, `${all} items in the thread`);
      assert.equal(view.app.state().host!.outline.length, all);
      assert.equal(view.document.querySelector('.run-header h1')?.textContent, (await store.getRun(runId))!.title);

      view.app.screen.list.scrollToKey(`${runId}:turn`);
      await untilDrawn(
        view,
        'the top of the thread',
        () => rows(view).includes(`${runId}:task`) || rows(view).includes(`${runId}:turn`),
      );
      assert.deepEqual(
        pageRequests(view).map((m) => (m.params as { from: number }).from),
        [0],
        'one page, the first',
      );
      assert.deepEqual(
        { ...(view.saved() as object), anchor: undefined },
        { runId, threadId, anchor: undefined },
        'what a reload needs to open it again is saved',
      );
    } finally {
      close();
    }
  });

  it("reads the rest of a long thread only once the view is ready, after the first state is out (the host's read does not hold up the view's ready)", async () => {
    const threadId = (await store.getRun(runId))!.thread_id;
    const sent: string[] = [];
    const ref: { view?: WebviewInDom } = {};
    const controller = new RunViewController(threadId, runId, deps(store), (m) => {
      sent.push(m.type === 'state' ? `state${m.partial ? ' partial' : ''}` : m.type);
      ref.view!.deliver(m);
    });
    const pushed = controller.pushState(true); // as the panel does when it opens, before its page has loaded
    for (let turn = 0; turn < 2000 && controller.transcript.version === 0; turn++)
      await new Promise((resolve) => setImmediate(resolve));
    assert.equal(controller.transcript.partial, true, 'the end was read first');
    for (let turn = 0; turn < 500 && controller.transcript.partial; turn++)
      await new Promise((resolve) => setImmediate(resolve));
    assert.equal(controller.transcript.partial, true, 'the rest waits while the view is not ready');
    assert.deepEqual(sent, [], 'nothing is posted to a view that is not ready');
    const view = (ref.view = openWebview({ toHost: (m) => void controller.receive(m) }));
    try {
      await pushed;
      assert.deepEqual(sent, ['state partial', 'state'], 'the end first, then the whole thread');
      assert.equal(controller.transcript.partial, false);
      await untilDrawn(view, 'the end of the thread', () => rows(view).includes(`${runId}:w:120`));
    } finally {
      controller.dispose();
      view.close();
    }
  });

  it('reads the rest of a long thread once the view has drawn its first state, not beside that frame', async () => {
    const threadId = (await store.getRun(runId))!.thread_id;
    const sent: string[] = [];
    const controller = new RunViewController(threadId, runId, deps(store), (m) => {
      sent.push(m.type === 'state' ? `state${m.partial ? ' partial' : ''}` : m.type);
    });
    try {
      const pushed = controller.pushState(true);
      const readied = controller.receive({ type: 'ready' }); // (settles once its own read is done)
      for (let turn = 0; turn < 2000 && sent.length === 0; turn++) await new Promise((r) => setImmediate(r));
      assert.deepEqual(sent, ['state partial'], 'the end went out when the view was ready');
      for (let turn = 0; turn < 500; turn++) await new Promise((r) => setImmediate(r));
      assert.equal(controller.transcript.partial, true, 'the rest waits while the view has not drawn it');
      await controller.receive({ type: 'painted' });
      await pushed;
      await readied;
      assert.deepEqual(sent, ['state partial', 'state'], 'then the whole thread');
      assert.equal(controller.transcript.partial, false);
      assert.equal(controller.rejectedMessages, 0, "both messages are the protocol's");
    } finally {
      controller.dispose();
    }
  });

  it('a view opened again with its saved state comes back to the same item', async () => {
    const threadId = (await store.getRun(runId))!.thread_id;
    const key = `${runId}:w:40`;
    const saved = { runId, threadId, anchor: { key, offset: 0 } };
    const { view, close } = open(threadId, runId, deps(store), saved);
    try {
      await untilDrawn(view, 'step 40', () => rows(view).includes(key));
      assert.deepEqual(view.app.screen.list.anchor(), saved.anchor);
      assert.ok(!rows(view).includes(`${runId}:w:120`), 'not the end');
    } finally {
      close();
    }
  });

  it("the host's messages are checked against the protocol on their way in (the view itself takes them as typed)", async () => {
    const view = openWebview({ toHost: () => undefined });
    view.deliver({ type: 'reveal', key: 'k' });
    assert.deepEqual(view.malformed, []);
    view.deliver({ type: 'delta', runId: 'r', step: 1, kind: 'bogus', text: 'x' } as never);
    view.deliver({ type: 'response', id: 9, ok: true, result: {} });
    assert.equal(view.malformed.length, 2, view.malformed.join('\n'));
    assert.throws(() => view.close(), /the host sent messages its protocol refuses/);
  });
});

const reply = (content: string | null, calls: { name: string; arguments: Record<string, unknown> }[] = []) => ({
  reply: { content, ...(calls.length ? { tool_calls: calls } : {}) },
});

describe('run view webview in a DOM: approvals in place', function () {
  this.timeout(60_000);

  it('a waiting edit is a card with its diff and Approve; Approve in the card runs it and the run completes', async () => {
    const scenario: Scenario = {
      name: 'approve-in-card',
      description: 'offline demo model: one edit to approve',
      model: DEMO_MODEL_ID,
      subconversations: [],
      turns: [
        reply('Editing.', [
          { name: 'edit_file', arguments: { path: 'a.txt', old_text: 'hello', new_text: 'bonjour' } },
        ]),
        reply('Done.'),
      ],
    };
    const server = await startModelServer({ scenario });
    const t = makeRunner({
      baseURL: server.url,
      policy: { categories: { read: 'auto', write: 'ask', command: 'auto', subagent: 'auto' } },
    });
    fs.writeFileSync(path.join(t.workspace, 'a.txt'), 'hello world\n');
    const h = await t.runner.start({ task: 'Say bonjour' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const threadId = (await t.store.getRun(h.runId))!.thread_id;
    const { view, controller, close } = open(
      threadId,
      h.runId,
      deps(t.store, { runner: t.runner, workspace: t.workspace, owner: t.runner.owner }),
    );
    try {
      const card = () => view.document.querySelector<HTMLElement>('section.tool.approval');
      // (the rows around the visible ones are drawn a frame after them)
      await untilDrawn(
        view,
        'the approval card and its step',
        () => card() !== null && view.document.querySelector(`.waypoint[data-step="1"]`) !== null,
      );
      assert.match(card()!.querySelector('pre.diff')!.textContent!, /-hello[\s\S]*\+bonjour/);
      assert.ok(card()!.querySelector('details')!.hasAttribute('open'), 'a waiting card is open');
      const approve = [...card()!.querySelectorAll<HTMLElement>('vscode-button')].find(
        (b) => b.textContent === 'Approve',
      )!;
      const waypoint = view.document.querySelector(`.waypoint[data-step="1"]`)!;
      assert.match(waypoint.textContent!, /edit_file a\.txt · waiting for approval/);
      assert.match(waypoint.textContent!, /Fork from here/);
      approve.click();
      await untilDrawn(
        view,
        'the run’s final answer',
        () => view.document.querySelector('.msg.assistant.final')?.textContent?.includes('Done.') === true,
      );
      assert.equal(fs.readFileSync(path.join(t.workspace, 'a.txt'), 'utf8'), 'bonjour world\n');
      const done = view.document.querySelector<HTMLElement>(`section.tool[data-tool-call-id]`)!;
      assert.ok(done.classList.contains('status-done') && !done.classList.contains('approval'));
      assert.match(
        view.document.querySelector(`.waypoint[data-step="1"]`)!.textContent!,
        /edit_file a\.txt · approved/,
      );
      assert.equal(controller.rejectedMessages, 0);
    } finally {
      close();
      await t.store.close();
      await server.close();
    }
  });
});
