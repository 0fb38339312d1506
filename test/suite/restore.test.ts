// Restore files in a real extension host: the agent writes, edits and runs a command over real
// HTTP; "Restore files to checkpoint" always previews (ticks passed to the public command cannot
// skip it; the tests tick through the extension's test API), writes exact bytes in place (an
// executable file with a hard link keeps both), keeps a file open with unsaved changes, records what it did with the run, shows it in the tree; undoing the restore
// brings the agent's versions back; restore → fork → resume continues from matching files and conversation.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { CommandIds } from '../../src/contributes';
import type { RestoreRecord } from '../../src/store/api/schema';
import type { TranscriptItem } from '../../src/views/run/items';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { activated, configure, waitForState } from './helpers';

const call = (name: string, args: Record<string, unknown>) => ({
  reply: { content: `(offline demo model) ${name}`, tool_calls: [{ name, arguments: args }] },
});
const SCENARIO: Scenario = {
  name: 'in-host-restore',
  description: 'offline demo model: change files, then answer',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    call('write_file', { path: 'restore/a.txt', content: 'agent A\r\n' }),
    call('write_file', { path: 'restore/b.txt', content: 'agent B' }),
    call('run_command', { command: 'printf cmd > restore/cmd.txt && rm restore/b.txt' }),
    call('write_file', { path: 'restore/dirty.txt', content: 'agent dirty' }),
    { reply: { content: '(offline demo model) Changed four files.' } },
  ],
};

describe('restore files in a real extension host', () => {
  let model: ModelServer;
  // Desktop's default (the web workbench saves after a delay): an editor with unsaved text stays unsaved.
  const settings = {
    'agentWaypoints.approval.write': 'auto',
    'agentWaypoints.approval.command': 'auto',
    'files.autoSave': 'off',
  };

  before(async () => {
    model = await startModelServer({ scenario: SCENARIO });
    await configure({
      'agentWaypoints.provider.baseUrl': model.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      ...settings,
    });
  });
  after(async () => {
    await configure(Object.fromEntries(Object.keys(settings).map((k) => [k, undefined])));
    await model.close();
  });

  it('shows the preview whatever the command is passed; restores in place (mode, hard links), keeps a dirty editor, records it; undoing it brings the agent’s files back; restore → fork → resume', async () => {
    const api = await activated();
    const root = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    const file = (rel: string) => path.join(root, 'restore', rel);
    fs.mkdirSync(path.join(root, 'restore'), { recursive: true });
    fs.writeFileSync(file('a.txt'), 'original a\n');
    fs.writeFileSync(file('dirty.txt'), 'original dirty\n');
    fs.writeFileSync(file('untouched.txt'), 'never journaled\n');

    const runId = (await vscode.commands.executeCommand<string>(CommandIds.startRun, 'Change some files'))!;
    assert.equal(await waitForState(api, runId, ['completed', 'paused_error']), 'completed');
    assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), 'agent A\r\n');
    const firstBatch = (await api.store!.list(runId, { limit: 100 }))
      .reverse()
      .find((r) => r.phase === 'pre_tool_batch')!;

    // The user types in dirty.txt without saving: the restore must not touch it.
    const dirtyDoc = await vscode.workspace.openTextDocument(file('dirty.txt'));
    const dirtyEditor = await vscode.window.showTextDocument(dirtyDoc);
    await dirtyEditor.edit((e) => e.insert(new vscode.Position(0, 0), 'user typing '));
    assert.ok(dirtyDoc.isDirty);

    // The public command shows the preview whatever its caller passes: ticks cannot skip it.
    const viaCommand = vscode.commands.executeCommand<RestoreRecord | undefined>(
      CommandIds.restoreFiles,
      { runId, seq: firstBatch.seq },
      { rewind: false, ticked: ['restore/a.txt', 'restore/cmd.txt'] },
    );
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), 'agent A\r\n', 'nothing restored while the preview is open');
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    assert.equal(await viaCommand, undefined, 'dismissing the preview restores nothing');
    assert.deepEqual(await api.store!.listRestores(runId), []);

    // Files keep their identity: an executable file with a hard link is rewritten in place.
    fs.chmodSync(file('a.txt'), 0o755);
    fs.linkSync(file('a.txt'), file('a-link.txt'));
    const inode = fs.statSync(file('a.txt')).ino;
    const record = await api.testing!.restoreFiles!(
      { runId, seq: firstBatch.seq },
      { rewind: false, ticked: ['restore/a.txt', 'restore/cmd.txt'] },
    );
    assert.ok(record, 'the flow returns the restore record');
    const actions = Object.fromEntries(record.files.map((f) => [f.path, f.action]));
    assert.deepEqual(actions, {
      'restore/a.txt': 'reverted',
      'restore/b.txt': 'unchanged',
      'restore/cmd.txt': 'reverted',
      'restore/dirty.txt': 'kept',
    });
    assert.match(record.files.find((f) => f.path === 'restore/dirty.txt')!.reason, /unsaved changes/);
    assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), 'original a\n');
    assert.equal(fs.statSync(file('a.txt')).ino, inode, 'written in place, not deleted and re-created');
    assert.equal(fs.statSync(file('a.txt')).mode & 0o777, 0o755, 'still executable');
    assert.equal(fs.readFileSync(file('a-link.txt'), 'utf8'), 'original a\n', 'the hard link still shares it');
    fs.rmSync(file('a-link.txt'));
    assert.equal(fs.existsSync(file('cmd.txt')), false, 'created by the command: deleted');
    assert.equal(fs.readFileSync(file('dirty.txt'), 'utf8'), 'agent dirty', 'the dirty file is not written on disk');
    assert.ok(
      dirtyDoc.isDirty && dirtyDoc.getText().startsWith('user typing '),
      'the unsaved text is still in the editor',
    );
    assert.equal(fs.readFileSync(file('untouched.txt'), 'utf8'), 'never journaled\n');
    assert.deepEqual(
      (await api.store!.listRestores(runId)).map((r) => r.id),
      [record.id],
      'recorded with the run',
    );

    // The Runs tree shows the restore above the run's checkpoints.
    const runNode = await findRunNode(api, runId);
    const children = await api.tree!.getChildren(runNode);
    const shown = children.find((n) => n.kind === 'restore');
    assert.ok(shown, 'a restore node');
    assert.match(
      String(api.tree!.getTreeItem(shown).description),
      /2 restored · 1 already as at the checkpoint · 1 kept/,
    );

    // Undo: restoring to the checkpoint the restore followed brings the agent's versions back (the
    // restore's own writes are journaled); the file the user kept is untouched again.
    const undo = (await api.testing!.restoreFiles!(
      { runId, seq: record.checkpoint_seq },
      { rewind: false, ticked: ['restore/a.txt', 'restore/cmd.txt'] },
    ))!;
    assert.deepEqual(Object.fromEntries(undo.files.map((f) => [f.path, f.action])), {
      'restore/a.txt': 'reverted',
      'restore/cmd.txt': 'reverted',
    });
    assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), 'agent A\r\n');
    assert.equal(fs.readFileSync(file('cmd.txt'), 'utf8'), 'cmd');
    assert.ok(dirtyDoc.isDirty, 'still unsaved');
    await vscode.window.showTextDocument(dirtyDoc);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');

    // Restore and rewind: the files go back again and the conversation forks from the checkpoint.
    const before = model.stats().total;
    const rewound = await api.testing!.restoreFiles!(
      { runId, seq: firstBatch.seq },
      { rewind: true, ticked: ['restore/a.txt', 'restore/cmd.txt', 'restore/dirty.txt'] },
    );
    assert.ok(rewound?.forked_run_id, 'the record names the fork');
    assert.equal(fs.readFileSync(file('dirty.txt'), 'utf8'), 'original dirty\n');
    assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), 'original a\n');
    const forkId = rewound.forked_run_id;
    assert.deepEqual(
      (await api.store!.listEffects(forkId)).map((e) => e.tool_call_id),
      [],
      'the restored call is not replayed in the fork',
    );
    await vscode.commands.executeCommand(CommandIds.resumeRun, forkId);
    assert.equal(await waitForState(api, forkId, ['completed', 'paused_error']), 'completed');
    // The fork starts at step 1's pending response: its write_file runs again (its files were put
    // back), then the scripted model answers steps 2–4 and the final answer again.
    assert.equal(model.stats().total - before, 4, 'the fork asked the model from the checkpoint on, never for step 1');
    const forked = (await api.store!.loadSnapshot(forkId)).snapshot;
    assert.equal(forked.tool_executions[0]?.replayed, false, 'the restored call ran again instead of replaying');
    assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), 'agent A\r\n');
    assert.equal(
      (await api.store!.listEffects(forkId))[0]?.files?.[0]?.before.kind,
      'file',
      'the fork journals its own changes from the restored files',
    );
  });
});

describe('restore files from the run view in a real extension host', () => {
  const VIEW_SCENARIO: Scenario = {
    name: 'in-host-run-view-restore',
    description: 'offline demo model: write a file, then answer',
    model: DEMO_MODEL_ID,
    subconversations: [],
    turns: [
      call('write_file', { path: 'runview/a.txt', content: 'agent A\n' }),
      { reply: { content: '(offline demo model) Wrote a.txt.' } },
    ],
  };
  let model: ModelServer;
  const settings = { 'agentWaypoints.approval.write': 'auto' };
  before(async () => {
    model = await startModelServer({ scenario: VIEW_SCENARIO });
    await configure({
      'agentWaypoints.provider.baseUrl': model.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      ...settings,
    });
  });
  after(async () => {
    await configure(Object.fromEntries(Object.keys(settings).map((k) => [k, undefined])));
    await model.close();
  });

  it('the run view’s Restore files to here opens the preview, restores on accept, shows the card; its Undo restores back', async () => {
    const api = await activated();
    const file = path.join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, 'runview', 'a.txt');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'original A\n');
    const runId = (await vscode.commands.executeCommand<string>(CommandIds.startRun, 'Write a.txt for the run view'))!;
    assert.equal(await waitForState(api, runId, ['completed', 'paused_error']), 'completed');
    const view = (await api.panels!.show(runId))!;
    const find = <K extends TranscriptItem['kind']>(
      kind: K,
      pred: (i: Extract<TranscriptItem, { kind: K }>) => boolean = () => true,
    ) =>
      until(
        `a ${kind} item`,
        () =>
          view.controller.transcript.find((i) => i.kind === kind && pred(i as Extract<TranscriptItem, { kind: K }>)) as
            Extract<TranscriptItem, { kind: K }> | undefined,
      );
    const step1 = await find('waypoint', (w) => w.step === 1);
    const step2 = await find('waypoint', (w) => w.step === 2);
    assert.deepEqual([step1.filesAfter, step2.filesAfter], [true, false]);
    const request = (id: number, method: string, params: Record<string, unknown>) =>
      view.controller.receive({ type: 'request', id, method, params });

    // A forged request for the answer step (nothing changed after it) is refused before any UI.
    await request(1, 'waypointAction', { runId, seq: step2.seq, action: 'restoreFiles' });
    assert.equal(view.rejectedMessages, 1);

    // Restore files to here: the command asks (restore / and rewind), then the preview; nothing changes before Enter.
    const restoring = request(2, 'waypointAction', { runId, seq: step1.seq, action: 'restoreFiles' });
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(fs.readFileSync(file, 'utf8'), 'agent A\n', 'nothing is written while the pickers are open');
    assert.deepEqual(await api.store!.listRestores(runId), []);
    const [record] = await acceptUntil(async () =>
      (await api.store!.listRestores(runId)).filter((r) => r.to_seq === step1.seq),
    );
    await restoring;
    assert.equal(view.rejectedMessages, 1, 'the real request was accepted');
    assert.equal(fs.readFileSync(file, 'utf8'), 'original A\n');
    assert.deepEqual(
      record!.files.map((f) => [f.path, f.action]),
      [['runview/a.txt', 'reverted']],
    );
    const card = await find('restore', (r) => r.restoreId === record!.id);
    assert.deepEqual([card.toStep, card.counts, card.undoable], [1, '1 restored', true]);

    // Undo this restore: the preview again (no rewind question), then the agent's version is back.
    const undoing = request(3, 'restoreAction', { runId, restoreId: record!.id, action: 'undo' });
    await acceptUntil(async () =>
      (await api.store!.listRestores(runId)).filter((r) => r.to_seq === record!.checkpoint_seq),
    );
    await undoing;
    assert.equal(fs.readFileSync(file, 'utf8'), 'agent A\n');
    await find('restore', (r) => r.toSeq === record!.checkpoint_seq);
    view.panel.dispose();
  });
});

/** Waits for a value (polling). */
async function until<T>(
  what: string,
  get: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Presses Enter in whatever quick input is open (the rewind question, the preview) until `done` lists something. */
async function acceptUntil<T>(done: () => Promise<T[]>): Promise<T[]> {
  return until('the restore to be recorded', async () => {
    const got = await done();
    if (got.length > 0) return got;
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    await new Promise((r) => setTimeout(r, 400));
    return undefined;
  });
}

async function findRunNode(api: Awaited<ReturnType<typeof activated>>, runId: string) {
  for (let i = 0; i < 50; i++) {
    for (const g of await api.tree!.getChildren()) {
      const node = (await api.tree!.getChildren(g)).find((n) => n.kind === 'run' && n.run.run_id === runId);
      if (node) return node;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`run ${runId} is not in the tree`);
}
