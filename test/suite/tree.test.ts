// The Runs tree as a user meets it: a follow-up turn groups two runs into one conversation node, a
// run's checkpoints read as steps ("Step 1 · edit_file src/greet.js · approved"), clicking a step
// opens the run view at that step, and "Open in tree" finds a run inside its thread.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { CommandIds } from '../../src/contributes';
import type { RunsTreeNode } from '../../src/views/runs/nodes';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { activated, configure, setApiKey, waitForState } from './helpers';

const EDIT_THEN_FOLLOW_UP: Scenario = {
  name: 'in-host-tree',
  description: 'offline demo model: an approved edit, an answer, then a follow-up answered',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    {
      reply: {
        content: '(offline demo model) Polishing.',
        tool_calls: [{ name: 'edit_file', arguments: { path: 'src/greet.js', old_text: 'Hello', new_text: 'Hi' } }],
      },
    },
    { reply: { content: '(offline demo model) greet.js now says Hi.' } },
    { reply: { content: '(offline demo model) In French: Salut.' } },
  ],
};

describe('the Runs tree: threads and steps', () => {
  let model: ModelServer;
  before(async () => {
    model = await startModelServer({ scenario: EDIT_THEN_FOLLOW_UP });
    await configure({ 'agentWaypoints.provider.baseUrl': model.url, 'agentWaypoints.provider.model': DEMO_MODEL_ID });
  });
  after(async () => {
    await vscode.commands.executeCommand(CommandIds.clearApiKey);
    await configure({ 'agentWaypoints.provider.baseUrl': undefined, 'agentWaypoints.provider.model': undefined });
    await model.close();
  });

  it('a follow-up makes a thread node of two turns; a step reads "Step 1 · edit_file src/greet.js · approved" and its click opens the run view there', async () => {
    const api = await activated();
    await setApiKey('sk-in-host-tree');
    const first = (await vscode.commands.executeCommand<string>(CommandIds.startRun, 'Polish greet.js'))!;
    assert.equal(
      await waitForState(api, first, ['awaiting_approval', 'completed', 'paused_error']),
      'awaiting_approval',
    );
    const [edit] = await api.store!.listApprovals(first, { pendingOnly: true });
    const resumed = await api.runner!.decideApprovals(first, [
      { kind: 'approve', toolCallId: edit!.tool_call_id, inputHash: edit!.input_hash },
    ]);
    assert.equal((await resumed!.done).state, 'completed');
    const out = await api.runner!.send(first, 'Say it in French too');
    assert.equal(out.kind, 'follow-up');
    assert.equal(await waitForState(api, out.runId, ['completed', 'paused_error']), 'completed');
    const second = out.runId;

    const tree = api.tree!;
    const thread = await poll(async () => {
      const finished = (await tree.getChildren()).find((g) => g.kind === 'group' && g.group === 'finished');
      return (
        finished &&
        (await tree.getChildren(finished)).find(
          (n) => n.kind === 'thread' && n.thread.runs.some((r) => r.run_id === first),
        )
      );
    });
    const threadItem = tree.getTreeItem(thread);
    assert.equal(threadItem.label, 'Polish greet.js', 'the conversation is named by its first turn');
    assert.match(String(threadItem.description), /^2 turns · completed · /);
    assert.match(String(threadItem.contextValue), /^thread\.completed/);
    const turns = await tree.getChildren(thread);
    assert.deepEqual(
      turns.map((t) => tree.getTreeItem(t).label),
      ['Turn 1 · Polish greet.js', 'Turn 2 · Say it in French too'],
    );
    assert.deepEqual(
      turns.map((t) => (t.kind === 'run' ? t.run.run_id : '')),
      [first, second],
    );
    assert.equal(tree.getParent(turns[0]!), thread);

    const steps = await tree.getChildren(turns[0]!);
    assert.deepEqual(
      steps.map((s) => tree.getTreeItem(s).label),
      ['Step 2 · final answer', 'Step 1 · edit_file src/greet.js · approved', 'Start'],
    );
    const step1 = steps[1]!;
    assert.equal(tree.getParent(step1), turns[0]);
    const phases = await tree.getChildren(step1);
    assert.deepEqual(
      phases.map((p) => (p.kind === 'checkpoint' ? p.record.phase : p.kind)),
      ['step_started', 'pre_llm', 'post_llm', 'run_started', 'pre_tool_batch', 'post_tool_batch'],
      'its phases inside, as they happened (the resume after the approval included)',
    );
    assert.equal(tree.getTreeItem(phases[0]!).contextValue, 'checkpoint', 'phase checkpoints keep their context menu');
    assert.equal(tree.getParent(phases[0]!), step1);

    const item = tree.getTreeItem(step1);
    assert.equal(item.command?.command, CommandIds.openRun);
    assert.equal(await vscode.commands.executeCommand(item.command.command, ...(item.command.arguments ?? [])), first);
    const view = api.panels!.get(first)!;
    assert.ok(view, 'the run view of the thread is open');
    assert.equal(view.controller.lastReveal, `${first}:w:1`, 'at step 1');
    assert.ok(
      view.controller.transcript.find((i) => i.key === `${first}:w:1`),
      'which is a waypoint the view shows',
    );

    // The run view's "Open in tree" reveals a run inside its thread (VS Code walks getParent).
    const rejected = view.rejectedMessages;
    await view.controller.receive({
      type: 'request',
      id: 1,
      method: 'runAction',
      params: { runId: second, action: 'openInTree' },
    });
    assert.equal(view.rejectedMessages, rejected, 'the reveal went through');
    const found = await tree.findRunNode(second);
    assert.ok(found && found.parent.kind === 'thread' && found.parent.parent.kind === 'group');
    view.panel.dispose();
  });
});

async function poll<T extends RunsTreeNode>(
  fn: () => Promise<RunsTreeNode | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as T;
    if (Date.now() > deadline) throw new Error('the tree never showed it');
    await new Promise((r) => setTimeout(r, 100));
  }
}
