import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { CommandIds } from '../../src/contributes';
import { findRipgrep } from '../../src/ripgrepPath';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { activated, configure, waitForState } from './helpers';

const SCENARIO: Scenario = {
  name: 'in-host-search',
  description: 'offline demo model: search and list the workspace',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    {
      reply: {
        content: '(offline demo model) Searching.',
        tool_calls: [
          { name: 'search_text', arguments: { pattern: 'NEEDLE_IN_HOST' } },
          { name: 'list_files', arguments: { path: 'area' } },
        ],
      },
    },
    { reply: { content: '(offline demo model) Found it once.' } },
  ],
};

/** Files the test adds to the workspace: one real match, one in an .ignore'd folder, one in a folder files.exclude hides. */
const FILES: Record<string, string> = {
  'area/.ignore': 'build/\n',
  'area/src/needle.js': 'const NEEDLE_IN_HOST = 1;\n',
  'area/build/bundle.js': 'const NEEDLE_IN_HOST = 2;\n',
  'area/generated/gen.js': 'const NEEDLE_IN_HOST = 3;\n',
};

describe('workspace search in a real extension host', () => {
  let model: ModelServer;
  let root: string;

  before(async () => {
    root = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    for (const [p, content] of Object.entries(FILES)) {
      fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
      fs.writeFileSync(path.join(root, p), content);
    }
    model = await startModelServer({ scenario: SCENARIO });
    await configure({
      'agentWaypoints.provider.baseUrl': model.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      'files.exclude': { '**/generated': true },
    });
  });
  after(async () => {
    await configure({ 'files.exclude': undefined });
    await model.close();
    fs.rmSync(path.join(root, 'area'), { recursive: true, force: true });
  });

  it('the extension finds the ripgrep VS Code ships under vscode.env.appRoot', async () => {
    const api = await activated();
    const rg = findRipgrep(vscode.env.appRoot);
    assert.ok(rg, `a ripgrep binary under ${vscode.env.appRoot}`);
    assert.ok(rg.startsWith(vscode.env.appRoot + path.sep), rg);
    assert.equal(api.files!.engine, 'ripgrep');
  });

  it('an agent run searches and lists through ripgrep: the one real match, nothing ignored or excluded', async () => {
    const api = await activated();
    const before = { ...api.files!.calls };
    const runId = (await vscode.commands.executeCommand<string>(CommandIds.startRun, 'Where is NEEDLE_IN_HOST?'))!;
    assert.equal(await waitForState(api, runId, ['completed', 'paused_error']), 'completed');
    const { snapshot } = await api.store!.loadSnapshot(runId);
    const results = snapshot.messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
    assert.deepEqual(results, [
      'area/src/needle.js:1: const NEEDLE_IN_HOST = 1;',
      '.ignore\nsrc/ (1 file)\n[also in "area", not listed: build/, generated/ — ignored (.gitignore, .ignore, exclude settings), symbolic links (not followed), or folders without listed files]',
    ]);
    assert.deepEqual(
      api.files!.calls,
      { ripgrep: before.ripgrep + 2, node: before.node },
      'both calls were answered by ripgrep',
    );
  });
});
