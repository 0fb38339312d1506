// Who decided: every decision records who made it and from where (user, machine, window or command
// line) in its durable record; the run view's decided card says it in small muted text; an export
// keeps it as history — on a call that ran, with its decision; on a call reset by import, in the
// reason it is asked again, never as a decision.
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../fixtures/modelServer/scenario';
import { toolCard, type Actions } from '../../../media/src/runView/toolCard';
import type { DecidedBy } from '../../../src/store/api/schema';
import { createMemoryStore } from '../../../src/store/memory/store';
import type { ToolItem } from '../../../src/views/run/items';
import { buildRunItems } from '../../../src/views/run/transcript';
import { loadRunData } from '../../../src/views/run/runData';
import { idle } from '../views/run/support';
import { makeRunner, owner } from './support';

const scenario: Scenario = {
  name: 'decided-by',
  description: 'offline demo model: two commands, then an answer',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    {
      reply: {
        content: null,
        tool_calls: [
          { id: 'call_1', name: 'run_command', arguments: { command: 'echo one' } },
          { id: 'call_2', name: 'run_command', arguments: { command: 'echo two' } },
        ],
      },
    },
    { reply: { content: 'done' } },
  ],
};

const ALICE: DecidedBy = { user: 'alice', host: 'laptop', via: 'window', window_id: 'window-session-1' };
const BOB: DecidedBy = { user: 'bob', host: 'build-box', via: 'cli' };

describe('who decided: recorded, shown, exported', function () {
  this.timeout(60_000);
  let server: ModelServer;
  beforeEach(async () => (server = await startModelServer({ scenario })));
  afterEach(async () => server.close());

  it('each decision records who made it and from where; the decided card says so; import keeps it as history', async () => {
    const t = makeRunner({
      baseURL: server.url,
      policy: { categories: { read: 'auto', write: 'auto', command: 'ask', subagent: 'auto' } },
      deps: { decidedBy: ALICE },
    });
    const h = await t.runner.start({ task: 'two commands' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const pending = await t.store.listApprovals(h.runId, { pendingOnly: true });
    assert.deepEqual(
      pending.map((a) => a.tool_call_id),
      ['call_1', 'call_2'],
    );
    const [one, two] = pending;
    // alice approves the first in her window; the run still waits for the second
    assert.equal(
      await t.runner.decideApprovals(h.runId, [{ kind: 'approve', toolCallId: 'call_1', inputHash: one!.input_hash }]),
      undefined,
    );

    // exported now, call_1 is decided but has not run: import resets it, and says who had decided it
    const midway = createMemoryStore();
    const imported = await midway.importRun(await t.store.exportRun(h.runId), owner('importer'));
    const reset = (await midway.listApprovals(imported.run_id)).find((a) => a.tool_call_id === 'call_1')!;
    assert.equal(reset.decision, null, 'never a decision made elsewhere');
    assert.match(reset.reason, /alice@laptop \(window\) had approved it/);

    // bob rejects the second from the command line; the run goes on and finishes
    const resumed = await t.runner.decideApprovals(
      h.runId,
      [{ kind: 'reject', toolCallId: 'call_2', inputHash: two!.input_hash, reason: 'not now' }],
      { by: BOB },
    );
    assert.equal((await resumed!.done).state, 'completed');

    const decided = new Map((await t.store.listApprovals(h.runId)).map((a) => [a.tool_call_id, a.decision]));
    assert.deepEqual(decided.get('call_1')?.by, ALICE);
    assert.deepEqual(decided.get('call_2')?.by, BOB);

    const items = buildRunItems(await loadRunData(t.store, (await t.store.getRun(h.runId))!, 1, idle));
    const cards = items.filter((i): i is ToolItem => i.kind === 'tool');
    assert.deepEqual(
      cards.map((c) => c.approval?.decidedBy),
      ['approved by alice@laptop (window)', 'rejected by bob@build-box (command line)'],
    );
    const dom = new JSDOM('<!doctype html><html><body></body></html>');
    Object.assign(globalThis, { document: dom.window.document, window: dom.window });
    try {
      const card = toolCard(cards[0]!, { readOnly: () => true, expanded: new Map() } as unknown as Actions);
      assert.equal(card.querySelector('.decided-by')?.textContent, 'approved by alice@laptop (window)');
    } finally {
      delete (globalThis as { document?: unknown }).document;
      delete (globalThis as { window?: unknown }).window;
    }

    // exported once both calls are answered: the decisions and who made them are the run's history
    const copy = createMemoryStore();
    const again = await copy.importRun(await t.store.exportRun(h.runId), owner('importer'));
    const kept = new Map((await copy.listApprovals(again.run_id)).map((a) => [a.tool_call_id, a.decision]));
    assert.deepEqual(kept.get('call_1')?.by, ALICE);
    assert.deepEqual(kept.get('call_2')?.by, BOB);
  });
});
