// The command line's settings: the extension's settings (same keys, defaults and allowed values —
// read from the package's own table), from the user's config file only, never a secret in it;
// the endpoint and the key from the environment. And where it finds a workspace's runs: the record
// the extension writes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CliConfig, ConfigError } from '../../../src/cli/config';
import { cliPolicy, readApiKey, readCliSettings } from '../../../src/cli/settings';
import { agentHome, recordedStorageDir, recordStorageDir } from '../../../src/storageDir';
import { loadShellGrammar, runCommand, writeFile, readFile } from '../../../src/runner/tools';
import { tmp } from '../loop/support';
import pkg from '../../../package.json';

const settingDefault = (k: string): unknown =>
  (pkg.contributes.configuration as { properties: Record<string, { default: unknown }> }[])[0]!.properties[
    `agentWaypoints.${k}`
  ]!.default;

describe('agent-waypoints config', () => {
  before(() => loadShellGrammar()); // the command policy reads command lines with it, as the runner does
  it('without a file, every setting is the extension’s default: writes and commands ask', () => {
    const home = tmp('cli-cfg');
    const c = CliConfig.load(undefined, { AGENT_WAYPOINTS_HOME: home });
    assert.equal(c.file, null);
    for (const k of ['provider.baseUrl', 'provider.model', 'approval.write', 'approval.command', 'budget.maxSteps'])
      assert.deepEqual(c.get(k), settingDefault(k), k);
    const policy = cliPolicy(readCliSettings(c, {}), home);
    assert.equal(policy(writeFile, { path: 'x.txt', content: '' }).verdict, 'ask');
    assert.equal(policy(runCommand, { command: 'echo hi' }).verdict, 'ask');
    assert.equal(policy(readFile, { path: 'x.txt' }).verdict, 'auto');
  });

  it('reads the user’s file (nested or dotted keys, with or without the prefix), never the workspace’s', () => {
    const home = tmp('cli-cfg');
    const workspace = tmp('cli-ws');
    // A repository cannot loosen the approvals: a file in the workspace is not read.
    fs.writeFileSync(path.join(workspace, 'agent-waypoints.json'), JSON.stringify({ approval: { write: 'auto' } }));
    fs.writeFileSync(
      path.join(home, 'agent-waypoints.json'),
      JSON.stringify({
        approval: { command: 'auto', commandDenyList: ['rm'] },
        'agentWaypoints.budget.maxSteps': 7,
        'provider.prices': { m: { input_per_mtok: 1, output_per_mtok: 2 } },
      }),
    );
    const s = readCliSettings(CliConfig.load(undefined, { AGENT_WAYPOINTS_HOME: home }), {});
    assert.equal(s.approval.write, 'ask');
    assert.equal(s.approval.command, 'auto');
    assert.deepEqual(s.commandDeny, ['rm']);
    assert.equal(s.budget.max_steps, 7);
    assert.deepEqual(s.prices, { m: { input_per_mtok: 1, output_per_mtok: 2 } });
    const policy = cliPolicy(s, workspace);
    assert.equal(policy(runCommand, { command: 'echo hi' }).verdict, 'auto');
    assert.equal(policy(runCommand, { command: 'rm -rf x' }).verdict, 'deny');
  });

  it('auto in sandbox: a command runs unasked in the sandbox with the allowed domains; where the sandbox cannot run it asks, saying why', () => {
    const home = tmp('cli-cfg');
    const c = CliConfig.parse(
      JSON.stringify({ approval: { command: 'sandbox' }, sandbox: { allowedDomains: ['registry.npmjs.org', ' '] } }),
      null,
    );
    const s = readCliSettings(c, {});
    const v = cliPolicy(s, home, null)(runCommand, { command: 'make test' });
    assert.equal(v.verdict, 'auto');
    assert.deepEqual(v.sandbox?.allowedDomains, ['registry.npmjs.org']);
    assert.equal(v.sandbox?.reportDomains, true);
    const away = cliPolicy(s, home, 'bubblewrap is not installed')(runCommand, { command: 'make test' });
    assert.equal(away.verdict, 'ask');
    assert.equal(away.sandbox, undefined);
    assert.match(away.reason, /bubblewrap is not installed/);
  });

  it('refuses unknown settings, wrong types, values outside the allowed ones, and any secret', () => {
    const bad = (o: unknown, re: RegExp) =>
      assert.throws(
        () => CliConfig.parse(JSON.stringify(o), 'cfg.json'),
        (e: Error) => e instanceof ConfigError && re.test(e.message),
      );
    bad({ aproval: { write: 'auto' } }, /unknown setting “aproval\.write”/);
    bad({ approval: { write: 'sometimes' } }, /“approval\.write” must be one of "auto", "ask", "deny"/);
    bad({ budget: { maxSteps: '9' } }, /must be a number, not string/);
    bad({ provider: { apiKey: 'sk-1' } }, /secrets never go in the config file/);
    bad({ store: { connectionString: 'postgres://u:p@h/db' } }, /secrets never go in the config file/);
    assert.throws(() => CliConfig.parse('{', 'cfg.json'), /cfg\.json is not JSON/);
    assert.throws(() => CliConfig.load('/nonexistent/agent-waypoints.json', {}), /cannot read the config file/);
  });

  it('the endpoint, the model and the key from the environment (the key also from a file)', () => {
    const c = CliConfig.parse('{}', null);
    const s = readCliSettings(c, { AGENT_WAYPOINTS_BASE_URL: 'http://127.0.0.1:9/v1', AGENT_WAYPOINTS_MODEL: 'm1' });
    assert.deepEqual([s.baseUrl, s.model], ['http://127.0.0.1:9/v1', 'm1']);
    const file = path.join(tmp('cli-key'), 'key');
    fs.writeFileSync(file, 'sk-from-file\n');
    assert.equal(readApiKey({ AGENT_WAYPOINTS_API_KEY_FILE: file }), 'sk-from-file');
    assert.equal(readApiKey({ AGENT_WAYPOINTS_API_KEY: 'sk-env', AGENT_WAYPOINTS_API_KEY_FILE: file }), 'sk-env');
    assert.equal(readApiKey({}), undefined);
    assert.throws(
      () => readApiKey({ AGENT_WAYPOINTS_API_KEY_FILE: `${file}.missing` }),
      /cannot read the API key file/,
    );
  });

  it('finds the storage the extension recorded for a workspace, by its real path', async () => {
    const home = tmp('cli-home');
    const workspace = tmp('cli-ws');
    const storage = tmp('cli-storage');
    const link = path.join(tmp('cli-link'), 'checkout');
    fs.symlinkSync(workspace, link);
    assert.equal(recordedStorageDir(workspace, home), undefined);
    await recordStorageDir(workspace, storage, home);
    assert.equal(recordedStorageDir(workspace, home), storage);
    assert.equal(recordedStorageDir(link, home), storage, 'a symlink to the checkout is the same workspace');
    assert.equal(recordedStorageDir(tmp('cli-other'), home), undefined);
    fs.rmSync(storage, { recursive: true });
    assert.equal(recordedStorageDir(workspace, home), undefined, 'a storage folder that is gone is not offered');
    assert.equal(agentHome({ AGENT_WAYPOINTS_HOME: home }), home);
    assert.equal(agentHome({ XDG_CONFIG_HOME: '/x' }, 'linux'), '/x/agent-waypoints');
  });
});
