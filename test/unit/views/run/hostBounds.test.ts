// What the host sends the run view is bounded, whatever the model wrote: runs made by the real
// runner against the scripted model server, read by the real transcript and controller. The store
// keeps everything; the view gets each text cut to its bound, with a note, and a write too long to
// compare as the start of its content — and a streamed answer only up to the same bound; the
// header too.
import assert from 'node:assert/strict';
import { createMemoryStore } from '../../../../src/store';
import { FIELD_MAX_CHARS, TEXT_MAX_CHARS } from '../../../../src/views/run/bounds';
import { runHeader } from '../../../../src/views/run/header';
import type { ToolItem, TranscriptItem } from '../../../../src/views/run/items';
import { loadRunData } from '../../../../src/views/run/runData';
import { buildRunItems } from '../../../../src/views/run/transcript';
import { startModelServer } from '../../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../../fixtures/modelServer/scenario';
import { makeRunner, owner } from '../../loop/support';
import { deps, idle, open } from './support';
import { untilDrawn } from './webviewDom';

const scenario = (turns: Scenario['turns']): Scenario => ({
  name: 'host-bounds',
  description: 'offline demo model: outputs larger than the view is sent',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns,
});

/** 300 KB of answer, lines of prose. */
const LONG_ANSWER = 'The answer goes on, line after line of it.\n'.repeat(7000);
/** 210 KB to write: too long to compare in the card. */
const LONG_CONTENT = `${'const x = 1;\n'.repeat(100)}${'z'.repeat(210_000)}\nend\n`;

describe('run view host: what it sends is bounded', function () {
  this.timeout(120_000);

  it('a 300 KB answer and a waiting 210 KB write: each cut to its bound with a note; the write shown as the start of its content', async () => {
    const server = await startModelServer({
      scenario: scenario([
        {
          reply: {
            content: LONG_ANSWER,
            tool_calls: [{ name: 'write_file', arguments: { path: 'big.js', content: LONG_CONTENT } }],
          },
        },
        { reply: { content: 'Written.' } },
      ]),
    });
    const t = makeRunner({ baseURL: server.url });
    try {
      const h = await t.runner.start({ task: 'Write big.js' });
      assert.equal((await h.done).state, 'awaiting_approval');
      const items = buildRunItems(await loadRunData(t.store, (await t.store.getRun(h.runId))!, 1, idle));
      const answer = items.find((i): i is Extract<TranscriptItem, { kind: 'assistant' }> => i.kind === 'assistant')!;
      assert.ok(answer.text.length <= TEXT_MAX_CHARS, `${answer.text.length}`);
      assert.ok(LONG_ANSWER.startsWith(answer.text.slice(0, answer.text.lastIndexOf('\n…'))));
      assert.match(answer.text, /\n… \([\d,]+ more characters not shown\)$/);

      const write = items.find((i): i is ToolItem => i.kind === 'tool')!;
      assert.equal(write.title, 'write_file big.js');
      assert.equal(write.approval?.pending, true);
      const chars = LONG_CONTENT.length.toLocaleString('en-US');
      assert.equal(write.diff![0], `@@ too long to compare here (0 → ${chars} characters): the start of each @@`);
      assert.deepEqual(write.diff!.slice(1, 3), ['+const x = 1;', '+const x = 1;']);
      assert.ok(
        write.diff!.every((l) => l.length <= 1001),
        'each line cut',
      );
      assert.ok(write.diff!.length <= 201);
      assert.equal(write.argumentsEditable, false, 'too long to edit in the card');
      assert.ok(write.argumentsJson.length <= TEXT_MAX_CHARS);
      const sent = JSON.stringify(items).length;
      assert.ok(sent < 4 * TEXT_MAX_CHARS, `the run's items are ${sent} characters`);
      // The store keeps it all.
      const snapshot = (await t.store.loadSnapshot(h.runId)).snapshot;
      assert.ok(snapshot.messages.some((m) => m.role === 'assistant' && m.content === LONG_ANSWER));
    } finally {
      await t.store.close();
      await server.close();
    }
  });

  it('a streamed answer of 250 KB: the view is sent its bound’s worth while it streams, then the answer cut the same way', async () => {
    const streamed = 'streamed words, '.repeat(16_000);
    const server = await startModelServer({
      scenario: scenario([{ chunk_delay_ms: 2, reply: { content: streamed } }]),
    });
    const t = makeRunner({ baseURL: server.url });
    let close: (() => void) | undefined;
    try {
      let deltas = 0;
      const started = new Promise<void>((resolve) =>
        t.runner.events.on((e) => e.type === 'llm-delta' && ++deltas === 1 && resolve()),
      );
      const h = await t.runner.start({ task: 'Stream a lot' });
      await started;
      const run = (await t.store.getRun(h.runId))!;
      const opened = open(run.thread_id, h.runId, deps(t.store, { runner: t.runner }));
      close = opened.close;
      const { view } = opened;
      let longest = 0;
      let finished = false;
      void h.done.then(() => (finished = true));
      while (!finished) {
        const live = view.app.state().live;
        if (live) longest = Math.max(longest, live.text.length + live.buffered.length);
        await view.frames(1);
      }
      assert.ok(longest > 0, 'it was seen streaming');
      assert.ok(longest <= TEXT_MAX_CHARS + 100, `the view held ${longest} characters of it`);
      const final = () => view.document.querySelector('.msg.assistant.final .markdown')?.textContent ?? '';
      await untilDrawn(view, 'the answer', () => final().includes('more characters not shown'));
      assert.ok(final().length <= TEXT_MAX_CHARS + 500);
    } finally {
      close?.();
      await t.store.close();
      await server.close();
    }
  });

  it('the header: a run’s title and its stop’s detail (an error’s text) within the field bound', async () => {
    const store = createMemoryStore();
    try {
      const long = { title: 't'.repeat(300_000), task: 'Fail', agent_name: 'agent', model: DEMO_MODEL_ID };
      const { run, lease } = await store.createRun(long, owner());
      await store.setRunState(run.run_id, 'failed', `The provider said: ${'e'.repeat(500_000)}`);
      await lease.release();
      const header = await runHeader(store, (await store.getRun(run.run_id))!, { active: false });
      assert.ok(header.title.length <= FIELD_MAX_CHARS, `${header.title.length}`);
      assert.ok(header.detail!.startsWith('The provider said: eee') && header.detail!.length <= FIELD_MAX_CHARS);
      assert.match(header.detail!, /more characters not shown\)$/);
    } finally {
      await store.close();
    }
  });
});
