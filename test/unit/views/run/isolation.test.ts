// The run view draws each item on its own, and in bounded time: the real webview code in a DOM
// (jsdom) against the real host controller and runner. An answer that makes the Markdown renderer
// throw, or that it would take seconds over, is shown as plain text with a note; the items around
// it are drawn as usual; a waiting call whose arguments nest 10,000 deep keeps its card and its
// buttons, and Approve in it runs the call. (Arguments nested deeper than 64 levels never wait for
// approval: the runner refuses them first, test/unit/loop/bounds.test.ts; the card's fallback for
// such stored arguments is test/unit/views/run/bounds.test.ts's.)
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer } from '../../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../../fixtures/modelServer/scenario';
import { makeRunner } from '../../loop/support';
import { deps, open } from './support';
import { untilDrawn, type WebviewInDom } from './webviewDom';

/** Emphasis nested 2,500 deep (5 KB): marked overflows its stack on it. */
const THROWS = `${'*'.repeat(2500)}x${'*'.repeat(2500)}`;
/** 100 KB that marked takes seconds over (its time grows with the square of the length: marked issue 396). */
const SLOW = 'a_b__c'.repeat(16_000);
/** Arguments nested as deep as the runner lets through. */
const DEEP_ARGS = `{"path":"out.txt","content":"written","deep":${'['.repeat(62)}${']'.repeat(62)}}`;

const scenario = (turns: Scenario['turns']): Scenario => ({
  name: 'isolation',
  description: 'offline demo model: items that are hard to draw',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns,
});

/** The longest the event loop went without turning while `during` ran (setInterval ticks; ms). */
async function longestStall<T>(during: () => Promise<T>): Promise<{ result: T; longest: number }> {
  let last = performance.now();
  let longest = 0;
  const tick = setInterval(() => {
    longest = Math.max(longest, performance.now() - last);
    last = performance.now();
  }, 5);
  try {
    return { result: await during(), longest };
  } finally {
    clearInterval(tick);
    longest = Math.max(longest, performance.now() - last);
  }
}

const answer = (v: WebviewInDom, final: boolean) =>
  v.document.querySelector<HTMLElement>(`.msg.assistant${final ? '.final' : ':not(.final)'} .markdown`);

describe('run view webview in a DOM: each item drawn on its own, in bounded time', function () {
  this.timeout(120_000);

  it('an answer that makes marked throw is plain text with a note, the rest is drawn, and the waiting call nested 63 deep keeps its card: Approve runs it', async () => {
    const server = await startModelServer({
      scenario: scenario([
        { reply: { content: THROWS, tool_calls: [{ name: 'write_file', arguments: DEEP_ARGS }] } },
        { reply: { content: 'Done.' } },
      ]),
    });
    const t = makeRunner({
      baseURL: server.url,
      policy: { categories: { read: 'auto', write: 'ask', command: 'auto', subagent: 'auto' } },
    });
    const h = await t.runner.start({ task: 'Write out.txt' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const run = (await t.store.getRun(h.runId))!;
    const d = deps(t.store, { runner: t.runner, workspace: t.workspace, owner: t.runner.owner });
    const { view, controller, close } = open(run.thread_id, h.runId, d);
    try {
      const card = () => view.document.querySelector<HTMLElement>('section.tool.approval');
      await untilDrawn(view, 'the approval card', () => card() !== null && answer(view, false) !== null);

      const body = answer(view, false)!;
      assert.match(body.querySelector('.render-note')!.textContent!, /could not be rendered: .+ plain text/);
      assert.equal(body.querySelector('.plain-text')!.textContent, THROWS, 'the text as written, escaped');
      assert.equal(body.querySelectorAll('em, strong').length, 0);

      const labels = [...card()!.querySelectorAll('.label')].map((l) => l.textContent);
      assert.deepEqual(labels, ['Change', 'path', 'deep']);
      const shown = [...card()!.querySelectorAll('pre.args')].map((p) => p.textContent!);
      assert.equal(shown[1]!.split('\n').length, 62 * 2 - 1, 'printed whole, one bracket a line');
      const buttons = [...card()!.querySelectorAll<HTMLElement>('vscode-button')].map((b) => b.textContent);
      for (const label of ['Approve', 'Reject…', 'Edit arguments…', 'Approve edited', 'Show diff'])
        assert.ok(buttons.includes(label), `${label} is there: ${buttons.join(', ')}`);

      // Above them, the task and the step (the list draws what is in view: scrolled up to them, and back).
      const cardKey = card()!.dataset.key!;
      view.app.screen.list.scrollToKey(`${h.runId}:turn`);
      const task = () => view.document.querySelector('.msg.user .text')?.textContent;
      await untilDrawn(view, 'the task', () => task() === 'Write out.txt');
      assert.match(view.document.querySelector('.waypoint[data-step="1"]')!.textContent!, /waiting for approval/);
      view.app.screen.list.scrollToKey(cardKey);
      await untilDrawn(view, 'the card again', () => card() !== null);
      const approve = [...card()!.querySelectorAll<HTMLElement>('vscode-button')].find(
        (b) => b.textContent === 'Approve',
      )!;
      approve.click();
      await untilDrawn(view, 'the final answer', () => answer(view, true)?.textContent?.includes('Done.') === true);
      assert.equal(fs.readFileSync(path.join(t.workspace, 'out.txt'), 'utf8'), 'written');
      assert.equal((await t.store.getRun(h.runId))!.state, 'completed');
      assert.equal(controller.rejectedMessages, 0);
    } finally {
      close();
      await t.store.close();
      await server.close();
    }
  });

  it('100 KB of Markdown that marked takes seconds over is drawn as plain text with a note, without stalling the view', async () => {
    const server = await startModelServer({ scenario: scenario([{ reply: { content: SLOW } }]) });
    const t = makeRunner({ baseURL: server.url });
    const h = await t.runner.start({ task: 'Answer' });
    assert.equal((await h.done).state, 'completed');
    const run = (await t.store.getRun(h.runId))!;
    let close: (() => void) | undefined;
    try {
      // From before the view opens until it has drawn the answer: the host's reading and sending
      // too, as they share the thread here.
      const { result: view, longest } = await longestStall(async () => {
        const opened = open(run.thread_id, h.runId, deps(t.store));
        close = opened.close;
        await untilDrawn(opened.view, 'the answer', () => answer(opened.view, true) !== null);
        return opened.view;
      });
      console.log(`      (longest task while the view opened and drew it: ${Math.round(longest)} ms)`);
      assert.ok(longest < 2000, `the longest task while the view drew was ${Math.round(longest)} ms`);
      const body = answer(view, true)!;
      assert.match(body.querySelector('.render-note')!.textContent!, /plain text/);
      assert.ok(body.querySelector('.plain-text')!.textContent!.endsWith(SLOW.slice(-1000)), 'its text, to the end');
    } finally {
      close?.();
      await t.store.close();
      await server.close();
    }
  });
});
