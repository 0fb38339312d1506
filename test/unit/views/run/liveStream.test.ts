// A run view opened while the model is streaming starts from the text streamed so far (not from
// the middle of a word), and what it shows stays exactly a prefix of the answer: the host's text in
// the state message replaces the deltas it had not sent yet, so nothing is shown twice or skipped.
import assert from 'node:assert/strict';
import { RunViewController, type RunViewDeps } from '../../../../src/views/run/controller';
import type { HostMessage } from '../../../../src/views/run/protocol';
import { threadRuns } from '../../../../src/views/run/thread';
import { startModelServer } from '../../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../../fixtures/modelServer/scenario';
import { makeRunner } from '../../loop/support';
import { noEditor, testActions } from '../../../support/actions';

const ANSWER = `(offline demo model) ${'Streaming slowly, word by word. '.repeat(15)}`.trim();
const SCENARIO: Scenario = {
  name: 'live-stream',
  description: 'offline demo model: a slowly streamed answer',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [{ chunk_delay_ms: 15, reply: { content: ANSWER } }],
};

describe('run view controller: a view opened mid-stream', function () {
  this.timeout(60_000);

  it('starts from the text streamed so far; state text plus later deltas is always a prefix of the answer', async () => {
    const server = await startModelServer({ scenario: SCENARIO });
    try {
      const t = makeRunner({ baseURL: server.url });
      let deltas = 0;
      const enough = new Promise<void>((resolve) =>
        t.runner.events.on((e) => e.type === 'llm-delta' && ++deltas === 5 && resolve()),
      );
      const h = await t.runner.start({ task: 'Stream' });
      await enough;
      assert.ok(
        t.runner.partialResponse(h.runId)!.text.startsWith('(offline demo model)'),
        'the runner keeps what was streamed',
      );

      const posted: HostMessage[] = [];
      let live: string | null = null;
      let longest = '';
      const deps: RunViewDeps = {
        store: t.store,
        runner: t.runner,
        threadRuns: (id) => threadRuns(t.store, id),
        actions: testActions({ store: t.store, runner: t.runner, workspace: t.workspace, owner: t.runner.owner })
          .actions,
        editor: noEditor,
        log: { info: () => undefined, warn: () => undefined },
      };
      // Replays what the webview does with each message, in order.
      const post = (m: HostMessage) => {
        posted.push(m);
        if (m.type === 'state' && m.streaming?.text !== undefined) live = m.streaming.text;
        else if (m.type === 'delta' && m.kind === 'text' && live !== null) live += m.text;
        else return;
        assert.ok(ANSWER.startsWith(live!), `the view shows a prefix of the answer, got …${live!.slice(-40)}`);
        if (live!.length > longest.length) longest = live!;
      };
      const controller = new RunViewController((await t.store.getRun(h.runId))!.thread_id, h.runId, deps, post);
      await controller.receive({ type: 'ready' });
      const first = posted.find((m) => m.type === 'state');
      assert.ok(
        first && first.type === 'state' && first.streaming?.text?.startsWith('(offline demo model)'),
        'the first state carries the text from its beginning',
      );
      assert.equal((await h.done).state, 'completed');
      await new Promise((r) => setTimeout(r, 100)); // the last deltas go out on the next frame
      assert.equal(longest, ANSWER, 'the whole answer was shown, once');
      controller.dispose();
      await t.store.close();
    } finally {
      await server.close();
    }
  });
});
