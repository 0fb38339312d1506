// The command policy inside the real extension host (issue 18, finding 1): the bash grammar (WASM)
// loads in the extension's bundle, an allow-listed line runs from its parsed words without a shell
// (the argv runner, started with the host's own runtime), a denied program is refused, and a line
// that hides a second command behind a comment waits for the user, then runs in the shell as shown.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { CommandIds } from '../../src/contributes';
import { startModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { activated, configure, waitForState } from './helpers';

const HIDDEN = "echo hidden #'\ntouch PWNED-by-comment\n#'";

const SCENARIO: Scenario = {
  name: 'command-policy',
  description: 'offline demo model: an allow-listed line, a denied one, then one hiding a command',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    {
      reply: {
        content: '(offline demo model) Running commands.',
        tool_calls: [
          // dash's builtin echo would print a newline for \n; the program echo (no shell) prints it as is.
          { name: 'run_command', arguments: { command: 'echo \'a\\nb\' && echo "quoted ; words"' } },
          { name: 'run_command', arguments: { command: 'echo x && rm -rf nothing-here' } },
        ],
      },
    },
    {
      reply: {
        content: '(offline demo model) One more.',
        tool_calls: [{ name: 'run_command', arguments: { command: HIDDEN } }],
      },
    },
    { reply: { content: '(offline demo model) Done.' } },
  ],
};

describe('command policy in the extension host', () => {
  it('runs an allow-listed line without a shell, denies rm, asks for a line hiding a command and runs it as shown once approved', async () => {
    const api = await activated();
    const model = await startModelServer({ scenario: SCENARIO });
    try {
      await configure({
        'agentWaypoints.provider.baseUrl': model.url,
        'agentWaypoints.provider.model': DEMO_MODEL_ID,
        'agentWaypoints.approval.commandAllowList': ['echo'],
        'agentWaypoints.approval.commandDenyList': ['rm'],
      });
      const runId = (await vscode.commands.executeCommand<string>(CommandIds.startRun, 'Run the commands'))!;
      assert.equal(
        await waitForState(api, runId, ['completed', 'paused_error', 'awaiting_approval']),
        'awaiting_approval',
      );
      const tool = (await api.store!.loadSnapshot(runId))!.snapshot.messages.filter((m) => m.role === 'tool');
      assert.equal(tool.length, 2);
      assert.equal(tool[0]!.content, 'exit code: 0\n--- stdout ---\na\\nb\nquoted ; words\n\n--- stderr ---\n');
      assert.match(
        tool[1]!.content,
        /Denied by policy: Command "rm -rf nothing-here" matches the deny list entry "rm"/,
      );
      const pending = (await api.store!.listApprovals(runId)).filter((a) => !a.decision);
      assert.equal(pending.length, 1);
      assert.equal((pending[0]!.arguments as { command: string }).command, HIDDEN);
      assert.match(pending[0]!.reason, /a comment, which may hide what follows it/);
      const root = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
      assert.equal(fs.existsSync(path.join(root, 'PWNED-by-comment')), false, 'nothing ran before the user said so');
      // Approved by the user, the line runs through the shell exactly as shown (both lines of it).
      const a = pending[0]!;
      await api.runner!.decideApprovals(runId, [
        { toolCallId: a.tool_call_id, inputHash: a.input_hash, kind: 'approve' },
      ]);
      assert.equal(await waitForState(api, runId, ['completed', 'paused_error', 'awaiting_approval']), 'completed');
      assert.equal(fs.existsSync(path.join(root, 'PWNED-by-comment')), true, 'the approved line ran in the shell');
      fs.rmSync(path.join(root, 'PWNED-by-comment'));
    } finally {
      await configure({
        'agentWaypoints.approval.commandAllowList': undefined,
        'agentWaypoints.approval.commandDenyList': undefined,
      });
      await model.close();
    }
  });
});
