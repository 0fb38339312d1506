// A run view opened while the model is streaming: the real webview code (reducer, screen) in a DOM,
// wired to the real host controller and runner. It starts from the text streamed so far (not from
// the middle of a word), and what it draws stays exactly a prefix of the answer — the host's text
// in the state message replaces the deltas it had not sent yet — until the answer is an item.
// The scripted server holds the stream at three points until the view has drawn what came before:
// how fast a loaded machine opens the view never decides whether it sees the stream.
import assert from 'node:assert/strict';
import { createProvider } from '../../../../src/runner/provider';
import { RunViewController, type RunViewDeps } from '../../../../src/views/run/controller';
import { threadRuns } from '../../../../src/views/run/thread';
import { startModelServer } from '../../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../../fixtures/modelServer/scenario';
import { makeRunner } from '../../loop/support';
import { noEditor, testActions } from '../../../support/actions';
import { openWebview, untilDrawn } from './webviewDom';

const ANSWER = `(offline demo model) ${'Streaming slowly, word by word. '.repeat(15)}`.trim();
const SCENARIO: Scenario = {
  name: 'live-stream',
  description: 'offline demo model: a slowly streamed answer',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [{ chunk_delay_ms: 15, reply: { content: ANSWER } }],
};
/** The chunks (0 is the role, then the text in pieces) before which the stream waits for the test. */
const HOLDS = [6, 16, 26];

function gate(): { promise: Promise<void>; release: () => void } {
  let release = () => undefined as void;
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

describe('run view: a view opened mid-stream (webview in a DOM, real host)', function () {
  this.timeout(60_000);

  it('starts from the text streamed so far; what it draws is always a prefix of the answer; then the answer is the final item', async () => {
    const holds = new Map(HOLDS.map((at) => [at, gate()]));
    const server = await startModelServer({ scenario: SCENARIO, beforeChunk: (i) => holds.get(i)?.promise });
    // The stream stops on purpose while the view catches up: the client's stall deadline is not the subject.
    const provider = (model: string) =>
      createProvider({ baseURL: server.url, model, maxRetries: 0, timeoutMs: 60_000 });
    const t = makeRunner({ baseURL: server.url, deps: { provider } });
    let view: ReturnType<typeof openWebview> | undefined;
    let controller: RunViewController | undefined;
    try {
      let deltas = 0;
      const enough = new Promise<void>((resolve) =>
        t.runner.events.on((e) => e.type === 'llm-delta' && ++deltas === HOLDS[0]! - 1 && resolve()),
      );
      const h = await t.runner.start({ task: 'Stream' });
      await enough;

      const deps: RunViewDeps = {
        store: t.store,
        runner: t.runner,
        threadRuns: (id) => threadRuns(t.store, id),
        actions: testActions({ store: t.store, runner: t.runner, workspace: t.workspace, owner: t.runner.owner })
          .actions,
        editor: noEditor,
        log: { info: () => undefined, warn: () => undefined },
      };
      const v = openWebview({ toHost: (m) => void controller?.receive(m) });
      view = v;
      // After every message the view gets, what it holds (drawn, and waiting for a frame) is a prefix.
      const notPrefixes: string[] = [];
      controller = new RunViewController((await t.store.getRun(h.runId))!.thread_id, h.runId, deps, (m) => {
        v.deliver(m);
        setTimeout(() => {
          const live = v.app.state().live;
          if (live && !ANSWER.startsWith(live.text + live.buffered)) notPrefixes.push(live.text + live.buffered);
        }, 0);
      });
      const streamingText = () => v.document.querySelector('.msg.assistant.streaming .markdown')?.textContent?.trim();
      // Every frame: what is drawn is a prefix of the answer, and each new text is kept.
      const shown: string[] = [];
      const sample = () => {
        const text = streamingText();
        if (!text) return;
        assert.ok(ANSWER.startsWith(text), `drawn: …${text.slice(-40)}`);
        if (text !== shown.at(-1)) shown.push(text);
      };
      const watchUntil = (what: string, check: () => boolean) => untilDrawn(v, what, () => (sample(), check()));
      await watchUntil('the streamed text', () => Boolean(streamingText()));
      assert.ok(streamingText()!.startsWith('(offline demo model)'), 'from its beginning, not from the middle');

      const done = h.done.then((r) => r.state);
      let finished = false;
      void done.then(() => (finished = true));
      // Released one hold at a time: the stream runs to the next and waits there until the view has drawn more.
      for (const [i, at] of HOLDS.entries()) {
        const drawn = streamingText()!.length;
        holds.get(at)!.release();
        if (i + 1 < HOLDS.length)
          await watchUntil(`the text up to chunk ${HOLDS[i + 1]}`, () => (streamingText()?.length ?? 0) > drawn);
      }
      while (!finished) {
        sample();
        await v.frames(1);
      }
      assert.equal(await done, 'completed');
      assert.deepEqual(notPrefixes, [], 'the view never held text that is not the answer’s beginning');
      assert.ok(shown.length >= HOLDS.length, `it was drawn as it streamed (${shown.length} texts)`);
      assert.ok(
        shown.every((s, i) => i === 0 || s.length >= shown[i - 1]!.length),
        'it only grew',
      );
      await untilDrawn(
        v,
        'the final answer as an item',
        () => v.document.querySelector('.msg.assistant.final .markdown')?.textContent?.trim() === ANSWER,
      );
      assert.equal(v.document.querySelectorAll('.msg.assistant.streaming').length, 0, 'the live row is gone');
      assert.equal(controller.rejectedMessages, 0);
    } finally {
      controller?.dispose();
      view?.close();
      await t.store.close();
      await server.close();
    }
  });
});
