// "Connect a shared run store…" in a real extension host, against a real PostgreSQL cluster: it
// says what is wrong (no server, no project identity), and when the store can be used it keeps the
// connection string out of settings and switches this workspace to the shared kind.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { CommandIds } from '../../src/commands/ids';
import type { ConnectOutcome } from '../../src/commands/sharedStore';
import { startCluster, type PgCluster } from '../support/postgres';
import { activated } from './helpers';

describe('shared run store: connecting (real VS Code extension host)', function () {
  this.timeout(120_000);
  let cluster: PgCluster;
  const store = () => vscode.workspace.getConfiguration('agentWaypoints.store');
  before(() => (cluster = startCluster({ fsync: false })));
  after(async () => {
    await store().update('kind', undefined, vscode.ConfigurationTarget.Workspace);
    await store().update('workspaceName', undefined, vscode.ConfigurationTarget.Workspace);
    cluster.destroy();
  });

  it('says what is wrong, stores nothing; with a working database it switches this workspace to it, the secret outside settings', async () => {
    await activated();
    const connect = (url: string) => vscode.commands.executeCommand<ConnectOutcome>(CommandIds.connectSharedStore, url);
    const noName = await connect(cluster.url());
    assert.equal(noName.connected, false);
    assert.match(noName.problems.join(' '), /no git remote.*agentWaypoints\.store\.workspaceName/);
    await store().update('workspaceName', 'host test project', vscode.ConfigurationTarget.Workspace);
    const nobody = await connect('postgresql://aw:hunter2@127.0.0.1:1/runs');
    assert.equal(nobody.connected, false);
    assert.match(nobody.problems.join(' '), /Nothing is listening at runs on 127\.0\.0\.1:1/);
    assert.equal(store().get('kind'), 'local', 'nothing switched');
    const ok = await connect(cluster.url());
    assert.equal(ok.connected, true, JSON.stringify(ok));
    assert.match(ok.connected ? ok.check.notes.join(' ') : '', /will be created on first use/);
    assert.equal(store().get('kind'), 'postgres');
    const folder = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    const settings = fs.readFileSync(path.join(folder, '.vscode', 'settings.json'), 'utf8');
    assert.doesNotMatch(settings, /postgresql:|hunter2|aw-pg-/, 'the connection string is not in settings');
  });
});
