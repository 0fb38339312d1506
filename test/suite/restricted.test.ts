// Runs only in the untrusted pass of test/runInCodeServer.ts (workspace trust on, folder not trusted).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { CommandIds } from '../../src/contributes';
import { startModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { activated, configure, waitForState } from './helpers';

const SCENARIO: Scenario = {
  name: 'restricted',
  description: 'offline demo model: tries to write and run in an untrusted workspace',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    {
      reply: {
        content: '(offline demo model) Writing and running.',
        tool_calls: [
          { name: 'write_file', arguments: { path: 'pwned.txt', content: 'x' } },
          { name: 'run_command', arguments: { command: 'echo ran > ran.txt' } },
          { name: 'read_file', arguments: { path: 'src/greet.js' } },
        ],
      },
    },
    { reply: { content: '(offline demo model) Could not write.' } },
  ],
};

describe('restricted mode (untrusted workspace)', () => {
  it('is in restricted mode', () => {
    assert.equal(vscode.workspace.isTrusted, false, 'this pass opens the folder untrusted');
  });

  it('refuses write and command tools with a clear message; read tools still work', async () => {
    const api = await activated();
    const model = await startModelServer({ scenario: SCENARIO });
    try {
      await configure({ 'agentWaypoints.provider.baseUrl': model.url, 'agentWaypoints.provider.model': DEMO_MODEL_ID });
      // Workspace-level settings of a restricted workspace are ignored; the user-level ones apply.
      const runId = (await vscode.commands.executeCommand<string>(CommandIds.startRun, 'Try to write'))!;
      assert.equal(await waitForState(api, runId, ['completed', 'paused_error', 'awaiting_approval']), 'completed');
      const root = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
      assert.equal(fs.existsSync(path.join(root, 'pwned.txt')), false, 'write_file did not run');
      assert.equal(fs.existsSync(path.join(root, 'ran.txt')), false, 'run_command did not run');
      const tool = (await api.store!.loadSnapshot(runId))!.snapshot.messages.filter((m) => m.role === 'tool');
      assert.equal(tool.length, 3);
      assert.match(tool[0]!.content, /not trusted/);
      assert.match(tool[1]!.content, /not trusted/);
      assert.match(tool[2]!.content, /Hello/);
    } finally {
      await model.close();
    }
  });
});
