import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as vscode from 'vscode';
import { CommandIds } from '../../src/contributes';
import { canonicalJson } from '../../src/store/api/canonical';
import { openDiskStoreReady } from '../../src/store';
import * as h from '../unit/store/helpers';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import type { RunsTreeNode } from '../../src/views/runs/nodes';
import { activated, configure, setApiKey, waitForState } from './helpers';

const SCENARIO: Scenario = {
  name: 'in-host',
  description: 'offline demo model: read the workspace, then answer',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    {
      reply: {
        content: '(offline demo model) Looking around.',
        tool_calls: [{ name: 'list_files', arguments: { path: '.' } }],
      },
    },
    {
      reply: {
        content: null,
        tool_calls: [
          { name: 'read_file', arguments: { path: 'src/greet.js' } },
          { name: 'search_text', arguments: { pattern: 'exports\\.\\w+\\s*=' } },
        ],
      },
    },
    { reply: { content: '(offline demo model) greet.js exports greet(name).' } },
  ],
};

/** One command that takes a minute: something to approve, or to cancel while it runs. */
const SLOW_COMMAND: Scenario = {
  name: 'in-host-slow-command',
  description: 'offline demo model: a command that takes long',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    {
      reply: {
        content: '(offline demo model) Waiting.',
        tool_calls: [{ name: 'run_command', arguments: { command: 'sleep 60' } }],
      },
    },
    { reply: { content: '(offline demo model) Done.' } },
  ],
};

/** Every file under `dir` with its bytes; a file removed between the listing and its read (an
 *  owner lock a finished run lets go of) held nothing that is still on disk, so it is left out. */
function filesUnder(dir: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  for (const f of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const file = path.join(dir, f);
    try {
      if (fs.statSync(file).isFile()) out.push({ file, text: fs.readFileSync(file, 'utf8') });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  return out;
}

describe('agent runs in a real extension host', () => {
  let model: ModelServer;
  const KEY = 'sk-in-host-secret-4242';

  /** A run of its own for each test (no test depends on another's run or on their order). */
  async function finishedRun(api: Awaited<ReturnType<typeof activated>>): Promise<string> {
    await setApiKey(KEY);
    const id = (await vscode.commands.executeCommand<string>(CommandIds.startRun, 'Describe greet.js'))!;
    assert.ok(id, 'the command returns the run id');
    assert.equal(await waitForState(api, id, ['completed', 'paused_error']), 'completed');
    return id;
  }

  before(async () => {
    model = await startModelServer({ scenario: SCENARIO });
    await configure({ 'agentWaypoints.provider.baseUrl': model.url, 'agentWaypoints.provider.model': DEMO_MODEL_ID });
  });
  after(async () => {
    await vscode.commands.executeCommand(CommandIds.clearApiKey); // the next suites' servers are other origins
    await model.close();
  });

  it('Start agent run: the scripted run completes over real HTTP, checkpointed on disk', async () => {
    const api = await activated();
    const before = model.stats().total;
    const runId = await finishedRun(api);
    assert.equal(model.stats().total - before, 3, 'three model calls');
    assert.equal(model.requests[before]!.auth.key, KEY, 'the key from SecretStorage reached the server');
    const loaded = await api.store!.loadSnapshot(runId);
    assert.ok(
      loaded?.snapshot.messages.some((m) => m.role === 'tool' && m.content.includes('Hello')),
      'read_file output is in the transcript',
    );
    assert.ok(
      loaded?.snapshot.messages.some(
        (m) => m.role === 'tool' && /^src\/greet\.js:1: exports\.greet = /.test(m.content),
      ),
      'search_text (a worker thread in the extension host) found the definition',
    );
  });

  it('SecretStorage only: the API key appears nowhere in the storage folder', async () => {
    const api = await activated();
    await finishedRun(api); // a finished run whose log holds the key's traces, if any leaked
    await api.store!.flush();
    const hits = filesUnder(api.storageDir!)
      .filter((f) => f.text.includes(KEY))
      .map((f) => f.file);
    assert.deepEqual(hits, []);
    await vscode.commands.executeCommand(CommandIds.clearApiKey);
  });

  it('the Runs tree shows the run under Finished with its steps, newest first, and their phase checkpoints', async () => {
    const api = await activated();
    const runId = await finishedRun(api);
    const tree = api.tree!;
    let groups: RunsTreeNode[] = [];
    for (let i = 0; i < 50; i++) {
      groups = await tree.getChildren();
      if (groups.some((g) => g.kind === 'group' && g.group === 'finished')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const finished = groups.find((g) => g.kind === 'group' && g.group === 'finished')!;
    assert.ok(finished, 'a Finished group');
    const runs = await tree.getChildren(finished);
    const node = runs.find((n) => n.kind === 'run' && n.run.run_id === runId)!;
    assert.ok(node, 'the run is listed');
    const item = tree.getTreeItem(node);
    assert.equal(item.label, 'Describe greet.js');
    assert.match(String(item.description), /completed · step 3/);
    const resolved = await tree.resolveTreeItem(item, node);
    assert.match((resolved.tooltip as vscode.MarkdownString).value, /Storage on disk: \d+(\.\d)? KB/);
    const steps = await tree.getChildren(node);
    assert.deepEqual(
      steps.map((s) => tree.getTreeItem(s).label),
      [
        'Step 3 · final answer',
        'Step 2 · read_file src/greet.js, search_text exports\\.\\w+\\s*= · auto',
        'Step 1 · list_files . · auto',
        'Start',
      ],
    );
    const checkpoints = (await Promise.all(steps.map((s) => tree.getChildren(s)))).flat();
    const phases = checkpoints.flatMap((c) => (c.kind === 'checkpoint' ? [c.record.phase] : []));
    assert.deepEqual(
      phases.slice(0, 4),
      ['step_started', 'pre_llm', 'post_llm', 'run_terminal'],
      'the final step, its phases as they happened',
    );
    for (const p of ['run_started', 'pre_tool_batch', 'post_tool_batch']) assert.ok(phases.includes(p as never), p);
    const seqs = checkpoints.flatMap((c) => (c.kind === 'checkpoint' ? [c.record.seq] : []));
    assert.deepEqual(
      [...seqs].sort((a, b) => a - b),
      Array.from({ length: seqs.length }, (_, i) => i + 1),
      'every checkpoint in one step',
    );
  });

  it('Open checkpoint shows a read-only JSON document with the full snapshot', async () => {
    const api = await activated();
    const runId = await finishedRun(api);
    const latest = await api.store!.list(runId, { limit: 20 });
    const withSnapshot = latest.find((r) => r.phase === 'post_llm')!;
    const uri = await vscode.commands.executeCommand<string>(CommandIds.openCheckpoint, {
      runId,
      seq: withSnapshot.seq,
    });
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri)!;
    assert.ok(doc, 'the document is open');
    assert.equal(doc.languageId, 'json');
    const json = JSON.parse(doc.getText());
    assert.equal(json.phase, 'post_llm');
    assert.equal(json.seq, withSnapshot.seq);
    assert.ok(
      Array.isArray(json.snapshot.messages) && json.snapshot.messages.length >= 3,
      'the snapshot with its messages',
    );
  });

  it('Resume agent session on a finished run shows its stored result in the run view and calls no model', async () => {
    const api = await activated();
    const runId = await finishedRun(api);
    const before = model.stats().total;
    const state = await vscode.commands.executeCommand<string>(CommandIds.resumeRun, runId);
    assert.equal(state, 'completed');
    assert.equal(model.stats().total, before, 'no request reached the model');
    const view = api.panels!.get(runId);
    assert.ok(view, 'the run view of that run is open');
    const final = view.controller.transcript.find((i) => i.kind === 'assistant' && i.final);
    assert.ok(
      final?.kind === 'assistant' && /greet\.js exports greet\(name\)/.test(final.text),
      'it shows the stored final answer',
    );
    view.panel.dispose();
  });

  it('Export run… / Import run… round trip a run; a modified export is refused; retention deletes old finished runs', async () => {
    const api = await activated();
    const runId = await finishedRun(api);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-transfer-'));
    const exported = await vscode.commands.executeCommand<string>(
      CommandIds.exportRun,
      runId,
      vscode.Uri.file(path.join(dir, 'run.json')),
    );
    assert.equal(exported, path.join(dir, 'run.json'));
    const data = JSON.parse(fs.readFileSync(exported, 'utf8')) as {
      sha256: string;
      body: { meta: { created_ms: number }; state_ms: number; records: { timestamp_ms: number }[] };
    };
    // The same run as if it had finished 30 days ago, re-signed the way an export is.
    const shift = 30 * 24 * 60 * 60 * 1000;
    data.body.meta.created_ms -= shift;
    data.body.state_ms -= shift;
    for (const r of data.body.records) r.timestamp_ms -= shift;
    const tampered = path.join(dir, 'tampered.json');
    fs.writeFileSync(tampered, JSON.stringify(data));
    const before = (await api.store!.listRuns()).runs.length;
    assert.equal(
      await vscode.commands.executeCommand(CommandIds.importRun, vscode.Uri.file(tampered)),
      undefined,
      'a modified export is refused',
    );
    assert.equal((await api.store!.listRuns()).runs.length, before, 'a refused import changes nothing');

    data.sha256 = createHash('sha256').update(canonicalJson(data.body)).digest('hex');
    const old = path.join(dir, 'old.json');
    fs.writeFileSync(old, JSON.stringify(data));
    const imported = (await vscode.commands.executeCommand<string>(CommandIds.importRun, vscode.Uri.file(old)))!;
    assert.ok(imported && imported !== runId, 'the import is a run of its own');
    const summary = (await api.store!.getRun(imported))!;
    assert.equal(summary.state, 'completed');
    assert.equal(summary.last_seq, (await api.store!.getRun(runId))!.last_seq, 'every checkpoint came along');
    assert.ok(Date.now() - summary.updated_ms > 29 * 24 * 60 * 60 * 1000, 'its timestamps are kept');
    assert.deepEqual(
      (await api.store!.loadSnapshot(imported)).snapshot.messages,
      (await api.store!.loadSnapshot(runId)).snapshot.messages,
    );

    try {
      await configure({ 'agentWaypoints.retention.finishedRunDays': 7 });
      for (let i = 0; i < 100 && (await api.store!.getRun(imported)); i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(await api.store!.getRun(imported), undefined, 'the 30-day-old finished run is deleted');
      assert.ok(await api.store!.getRun(runId), 'the recent finished run is kept');
      const listed = async () => {
        const finished = (await api.tree!.getChildren()).find((g) => g.kind === 'group' && g.group === 'finished')!;
        return (await api.tree!.getChildren(finished)).flatMap((n) => (n.kind === 'run' ? [n.run.run_id] : []));
      };
      // Waits for what it asserts: while the tree still holds the import, it shares the run's thread id and
      // the two show as one thread node, which names neither run.
      const shown = async () => (await listed()).filter((id) => id === runId || id === imported);
      for (let i = 0; i < 50 && (await shown()).join() !== runId; i++) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(await shown(), [runId], 'the tree follows');
    } finally {
      await configure({ 'agentWaypoints.retention.finishedRunDays': undefined });
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Fork from checkpoint → Resume continues from there with one model call → Delete removes the fork', async () => {
    const api = await activated();
    const runId = await finishedRun(api);
    const records = await api.store!.list(runId, { limit: 100 });
    const secondResponse = records.filter((r) => r.phase === 'post_llm').sort((a, b) => a.seq - b.seq)[1]!;
    const forkId = (await vscode.commands.executeCommand<string>(CommandIds.forkFromCheckpoint, {
      runId,
      seq: secondResponse.seq,
    }))!;
    assert.ok(forkId && forkId !== runId, 'the fork is a run of its own');
    const fork = (await api.store!.getRun(forkId))!;
    assert.equal(fork.state, 'paused_cancelled', 'a fork waits to be resumed');
    assert.deepEqual(fork.forked_from, { run_id: runId, seq: secondResponse.seq });

    const before = model.stats().total;
    assert.equal(await vscode.commands.executeCommand<string>(CommandIds.resumeRun, forkId), 'running');
    assert.equal(await waitForState(api, forkId, ['completed', 'paused_error']), 'completed');
    assert.equal(
      model.stats().total - before,
      1,
      "the fork reuses the source's response at that checkpoint: only the last turn is requested",
    );
    assert.deepEqual(
      (await api.store!.loadSnapshot(forkId)).snapshot.messages,
      (await api.store!.loadSnapshot(runId)).snapshot.messages,
      'the same conversation',
    );

    assert.equal(await vscode.commands.executeCommand(CommandIds.deleteRun, forkId, { confirmed: true }), true);
    assert.equal(await api.store!.getRun(forkId), undefined);
    assert.ok(await api.store!.getRun(runId), 'the source is untouched');
  });

  it('Show pending approvals opens the panel of a run that waits; nothing runs meanwhile', async () => {
    const api = await activated();
    // Other suites' runs may still wait for a decision (each test makes the runs it needs): this test
    // starts from none waiting, so the command's "nothing waits" answer is its own.
    const waiting: string[] = [];
    for (let cursor: string | undefined, first = true; first || cursor; first = false) {
      const page = await api.store!.listRuns(cursor ? { cursor } : {});
      waiting.push(...page.runs.filter((r) => r.pending_approvals > 0).map((r) => r.run_id));
      cursor = page.cursor;
    }
    for (const id of waiting) if (!api.runner!.isActive(id)) await api.store!.deleteRun(id);
    assert.equal(await vscode.commands.executeCommand(CommandIds.showApprovals), false, 'no run waits yet');
    const slow = await startModelServer({ scenario: SLOW_COMMAND });
    await vscode.commands.executeCommand(CommandIds.clearApiKey); // the key was entered for another server (origin)
    try {
      await configure({ 'agentWaypoints.provider.baseUrl': slow.url });
      const id = (await vscode.commands.executeCommand<string>(CommandIds.startRun, 'Ask before waiting'))!;
      assert.equal(
        await waitForState(api, id, ['awaiting_approval', 'completed', 'paused_error']),
        'awaiting_approval',
      );
      assert.equal(await vscode.commands.executeCommand(CommandIds.showApprovals, id), true);
      assert.ok(api.panels!.get(id), 'the approval panel of that run is open');
      assert.deepEqual(await api.store!.listEffects(id), [], 'nothing ran before a decision');
      api.panels!.get(id)!.panel.dispose();
      assert.equal(await vscode.commands.executeCommand(CommandIds.deleteRun, id, { confirmed: true }), true);
    } finally {
      await configure({ 'agentWaypoints.provider.baseUrl': model.url });
      await slow.close();
    }
  });

  it('Cancel run stops a running command and pauses resumably', async () => {
    const api = await activated();
    const slow = await startModelServer({ scenario: SLOW_COMMAND });
    await vscode.commands.executeCommand(CommandIds.clearApiKey); // the key was entered for another server (origin)
    try {
      await configure({ 'agentWaypoints.provider.baseUrl': slow.url, 'agentWaypoints.approval.command': 'auto' });
      const id = (await vscode.commands.executeCommand<string>(CommandIds.startRun, 'Wait a minute'))!;
      for (let i = 0; i < 100 && (await api.store!.listEffects(id)).length === 0; i++)
        await new Promise((r) => setTimeout(r, 100));
      assert.equal((await api.store!.listEffects(id)).length, 1, 'the command started');
      const t0 = Date.now();
      assert.equal(await vscode.commands.executeCommand(CommandIds.cancelRun, id), true);
      assert.equal(
        await waitForState(api, id, ['paused_cancelled', 'completed', 'paused_error'], 15_000),
        'paused_cancelled',
      );
      assert.ok(Date.now() - t0 < 10_000, 'the sleep was stopped, not waited out');
      assert.equal(api.runner!.isActive(id), false);
    } finally {
      await configure({ 'agentWaypoints.provider.baseUrl': model.url, 'agentWaypoints.approval.command': undefined });
      await slow.close();
    }
  });

  it('a long run loads in pages of whole steps: "Load more…" fetches the next page', async () => {
    const api = await activated();
    const store = api.store!;
    const { run, lease } = await store.createRun(h.newRun('A long chain'), h.owner('in-host test'));
    await store.append(run.run_id, h.runStarted());
    const msgs = [
      { role: 'system' as const, content: 'sys' },
      { role: 'user' as const, content: 'go' },
    ];
    for (let step = 1; step <= 60; step++) {
      await store.append(run.run_id, h.stepStarted(h.snapshot(step, msgs)));
      await store.append(run.run_id, h.preLlm(step, msgs.length));
    }
    await store.append(run.run_id, h.terminal(60));
    await lease.release();
    const total = 122; // run_started + 60 × 2 + run_terminal
    await vscode.commands.executeCommand(CommandIds.refreshRuns);
    const tree = api.tree!;
    const finished = (await tree.getChildren()).find((g) => g.kind === 'group' && g.group === 'finished')!;
    const node = (await tree.getChildren(finished)).find((n) => n.kind === 'run' && n.run.run_id === run.run_id)!;
    assert.ok(node, 'the run is listed');
    let children = await tree.getChildren(node);
    const stepsOf = (nodes: RunsTreeNode[]) => nodes.flatMap((c) => (c.kind === 'step' ? [c.step] : []));
    assert.deepEqual(
      stepsOf(children),
      Array.from({ length: 50 }, (_, i) => 60 - i),
      'the first page: the newest 50 steps',
    );
    const more = children.at(-1)!;
    assert.equal(more.kind, 'loadMore');
    assert.equal(tree.getTreeItem(more).label, 'Load more…');
    await vscode.commands.executeCommand(CommandIds.loadMoreCheckpoints, more);
    children = await tree.getChildren(node);
    assert.deepEqual(
      stepsOf(children),
      Array.from({ length: 61 }, (_, i) => 60 - i),
      'every step once, newest first',
    );
    const seqs = (await Promise.all(children.map((c) => tree.getChildren(c))))
      .flat()
      .flatMap((c) => (c.kind === 'checkpoint' ? [c.record.seq] : []));
    assert.deepEqual(
      [...seqs].sort((a, b) => a - b),
      Array.from({ length: total }, (_, i) => i + 1),
      'every checkpoint once',
    );
    assert.ok(!children.some((c) => c.kind === 'loadMore'), 'nothing more to load');
    assert.equal(await vscode.commands.executeCommand(CommandIds.deleteRun, run.run_id, { confirmed: true }), true);
  });

  it('the context-menu commands accept the nodes the tree hands them', async () => {
    const api = await activated();
    const runId = await finishedRun(api);
    const tree = api.tree!;
    const finished = (await tree.getChildren()).find((g) => g.kind === 'group' && g.group === 'finished')!;
    const runNode = (await tree.getChildren(finished)).find((n) => n.kind === 'run' && n.run.run_id === runId)!;
    const stepNode = (await tree.getChildren(runNode)).find((n) => n.kind === 'step')!;
    const checkpointNode = (await tree.getChildren(stepNode)).find((n) => n.kind === 'checkpoint')!;
    assert.equal(await vscode.commands.executeCommand(CommandIds.resumeRun, runNode), 'completed');
    const uri = await vscode.commands.executeCommand<string>(CommandIds.openCheckpoint, checkpointNode);
    assert.ok(
      uri && checkpointNode.kind === 'checkpoint' && uri.includes(String(checkpointNode.record.seq)),
      'the checkpoint the node shows',
    );
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'aw-node-')), 'run.json');
    assert.equal(await vscode.commands.executeCommand(CommandIds.exportRun, runNode, vscode.Uri.file(file)), file);
    assert.equal(
      (JSON.parse(fs.readFileSync(file, 'utf8')) as { body: { meta: { run_id: string } } }).body.meta.run_id,
      runId,
    );
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  it('Refresh runs picks up a run another window wrote to the same storage', async () => {
    const api = await activated();
    const other = await openDiskStoreReady(api.storageDir!); // a second window's store over the same folder
    const { run, lease } = await other.createRun(h.newRun('Written by another window'), h.owner('other window'));
    await lease.release();
    await other.close();
    const listed = async () => {
      const ids: string[] = [];
      for (const g of await api.tree!.getChildren())
        for (const n of await api.tree!.getChildren(g)) if (n.kind === 'run') ids.push(n.run.run_id);
      return ids;
    };
    await vscode.commands.executeCommand(CommandIds.refreshRuns);
    assert.ok((await listed()).includes(run.run_id), 'the tree lists it after Refresh');
    assert.equal(await vscode.commands.executeCommand(CommandIds.deleteRun, run.run_id, { confirmed: true }), true);
  });
});
