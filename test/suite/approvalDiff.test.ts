// The approval's Show diff shows the file the tool writes (issue 18, finding 6): a write_file call
// naming an absolute path inside the workspace is compared with that file, found by the tools' own
// resolver, not with a made-up new file under the root. In a real extension host: the run view's
// showDiff request opens VS Code's diff editor; its left side is the file on disk.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { CommandIds } from '../../src/contributes';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID } from '../fixtures/modelServer/scenario';
import { activated, configure, waitForState } from './helpers';

describe('approval diff in a real extension host', () => {
  let model: ModelServer | undefined;
  after(async () => {
    await configure({ 'agentWaypoints.provider.baseUrl': undefined, 'agentWaypoints.provider.model': undefined });
    await model?.close();
  });

  it('an absolute path inside the workspace is compared with that very file', async () => {
    const api = await activated();
    const root = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    const target = path.join(root, 'diff', 'target.txt');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, 'old line\n');
    model = await startModelServer({
      scenario: {
        name: 'in-host-absolute-diff',
        description: 'offline demo model: write a file by its absolute path',
        model: DEMO_MODEL_ID,
        subconversations: [],
        turns: [
          {
            reply: {
              content: '(offline demo model) write',
              tool_calls: [{ name: 'write_file', arguments: { path: target, content: 'new line\n' } }],
            },
          },
          { reply: { content: '(offline demo model) done' } },
        ],
      },
    });
    await configure({ 'agentWaypoints.provider.baseUrl': model.url, 'agentWaypoints.provider.model': DEMO_MODEL_ID });
    const runId = (await vscode.commands.executeCommand<string>(CommandIds.startRun, 'Write by absolute path'))!;
    assert.equal(await waitForState(api, runId, ['awaiting_approval', 'paused_error']), 'awaiting_approval');
    const [approval] = await api.store!.listApprovals(runId, { pendingOnly: true });
    const view = (await api.panels!.show(runId))!;
    await view.controller.receive({
      type: 'request',
      id: 1,
      method: 'showDiff',
      params: { runId, toolCallId: approval!.tool_call_id },
    });
    const diff = await until(() =>
      vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .map((t) => t.input)
        .find(
          (i): i is vscode.TabInputTextDiff => i instanceof vscode.TabInputTextDiff && i.modified.scheme !== 'file',
        ),
    );
    assert.equal(diff.original.scheme, 'file', 'the left side is a file on disk, not an empty new file');
    assert.equal(fs.realpathSync(diff.original.fsPath), fs.realpathSync(target));
    const proposed = await vscode.workspace.openTextDocument(diff.modified);
    assert.equal(proposed.getText(), 'new line\n');
    assert.equal(fs.readFileSync(target, 'utf8'), 'old line\n', 'nothing written before the decision');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await api.runner!.decideApprovals(runId, [
      { kind: 'reject', toolCallId: approval!.tool_call_id, inputHash: approval!.input_hash, reason: 'test over' },
    ]);
    await waitForState(api, runId, ['completed', 'paused_error']);
  });
});

async function until<T>(get: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('timed out waiting for the diff editor');
    await new Promise((r) => setTimeout(r, 100));
  }
}
