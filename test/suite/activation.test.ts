import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { CommandIds } from '../../src/contributes';
import type { ExtensionApi } from '../../src/root';
import { setApiKey } from './helpers';

const EXTENSION_ID = 'agent-waypoints.agent-waypoints';

async function activated(): Promise<ExtensionApi> {
  const ext = vscode.extensions.getExtension<ExtensionApi>(EXTENSION_ID);
  assert.ok(ext, `extension ${EXTENSION_ID} is not installed in this host`);
  return ext.isActive ? ext.exports : await ext.activate();
}

describe('activation (real VS Code extension host)', () => {
  it('activates in this extension host with its services built', async () => {
    const api = await activated();
    assert.equal(api.pid, process.pid, 'runs in this extension host');
    assert.ok(
      api.store && api.runner && api.tree && api.panels,
      'a folder is open: store, runner, tree and run views exist',
    );
  });

  it('keeps its checkpoints in this workspace’s storage folder, which the store itself created', async () => {
    const api = await activated();
    await api.ready;
    assert.ok(api.storageDir, 'a folder is open, so context.storageUri is set');
    assert.ok(
      api.storageDir.split(path.sep).includes('workspaceStorage'),
      `under VS Code's workspace storage: ${api.storageDir}`,
    );
    assert.ok(fs.statSync(api.storageDir).isDirectory(), 'created at activation, not by this test');
    const { run, lease } = await api.store!.createRun(
      { title: 'storage probe', task: 'probe', agent_name: 'test', model: 'm' },
      api.runner!.owner,
    );
    await lease.release();
    const files = fs.readdirSync(api.storageDir, { recursive: true, encoding: 'utf8' });
    assert.ok(
      files.some((f) => f.split(path.sep).includes(run.run_id)),
      'the run is written there',
    );
    await api.store!.deleteRun(run.run_id);
  });

  it('registers exactly the commands it contributes', async () => {
    await activated();
    // VS Code adds focus/open/… commands for every contributed view and container; those are not ours.
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
    const viewIds: string[] = [
      ...Object.values(manifest.contributes.views as Record<string, { id: string }[]>)
        .flat()
        .map((v) => v.id),
      ...manifest.contributes.viewsContainers.activitybar.map(
        (c: { id: string }) => `workbench.view.extension.${c.id}`,
      ),
    ];
    const registered = (await vscode.commands.getCommands(true)).filter(
      (c) => c.startsWith('agentWaypoints.') && !viewIds.some((v) => c.startsWith(`${v}.`)),
    );
    const ours = Object.values(CommandIds) as string[];
    assert.deepEqual([...registered].sort(), [...ours].sort());
  });

  it('Set API key takes no key from its caller (any extension can run commands): the argument is ignored, the password box opens', async () => {
    const api = await activated();
    await vscode.commands.executeCommand(CommandIds.clearApiKey);
    let settled = false;
    const result = vscode.commands
      .executeCommand<boolean>(CommandIds.setApiKey, 'sk-from-another-extension')
      .then((r) => ((settled = true), r));
    // The password box waits for the user: press Escape (close it) until the command returns.
    for (const deadline = Date.now() + 15_000; !settled && Date.now() < deadline;) {
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(await result, false, 'nothing typed, nothing stored');
    assert.equal(await api.testing!.keys.get(), undefined);
  });

  it('the key lives in SecretStorage only; Clear API key removes it', async () => {
    const api = await activated();
    await setApiKey('sk-test-in-host');
    assert.equal((await api.testing!.keys.get())?.key, 'sk-test-in-host');
    const cleared = await vscode.commands.executeCommand<boolean>(CommandIds.clearApiKey);
    assert.equal(cleared, true);
    assert.equal(await api.testing!.keys.get(), undefined);
    const settings = JSON.stringify(vscode.workspace.getConfiguration('agentWaypoints'));
    assert.ok(!settings.includes('sk-test-in-host'), 'the key never lands in settings');
  });
});
