// "Auto in sandbox" from the command line: the config file's `approval.command: "sandbox"` runs a
// command on no allow list without asking, inside the real bubblewrap sandbox (the CLI and its
// workers compose the same runner as a window); a domain the sandbox blocked waits as a retry that a
// plain `approve` cannot pass, and `approve --allow-domains` runs that one command once more with it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { DEMO_MODEL_ID, type ScenarioInput } from '../../fixtures/modelServer/scenario';
import { countingServer } from '../../support/countingServer';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { cli, cliBundle } from '../../support/cliProcess';
import { tmp } from '../loop/support';

describe('agent-waypoints with auto in sandbox (real bubblewrap)', function () {
  this.timeout(120_000);
  let model: ModelServer | undefined;
  let web: Awaited<ReturnType<typeof countingServer>> | undefined;
  before(() => cliBundle());
  afterEach(async () => {
    await model?.close();
    web?.close();
    model = web = undefined;
  });

  it('runs an unlisted command unasked inside the sandbox; a blocked domain waits for --allow-domains, then runs once more', async () => {
    web = await countingServer();
    const command = `echo in > inside.txt; echo try >> tries.txt; curl -sS -m 5 http://127.0.0.1:${web.port}/ > got.txt`;
    const scenario: ScenarioInput = {
      name: 'cli-sandbox',
      description: 'offline demo model: one command that wants the network',
      model: DEMO_MODEL_ID,
      subconversations: [],
      turns: [
        { reply: { content: null, tool_calls: [{ id: 'call_1', name: 'run_command', arguments: { command } }] } },
        { reply: { content: 'fetched' } },
      ],
    };
    model = await startModelServer({ scenario });
    const home = tmp('cli-home');
    const workspace = tmp('cli-ws');
    const config = path.join(home, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ approval: { command: 'sandbox' } }));
    const env = {
      AGENT_WAYPOINTS_HOME: home,
      AGENT_WAYPOINTS_BASE_URL: model.url,
      AGENT_WAYPOINTS_MODEL: DEMO_MODEL_ID,
    };
    const at = ['--workspace', workspace, '--store', tmp('cli-store'), '--config', config];
    const file = (rel: string) => fs.readFileSync(path.join(workspace, rel), 'utf8');

    const waiting = await cli(['run', 'fetch it', '--json', ...at], env);
    assert.equal(waiting.code, 2, waiting.stderr);
    assert.equal(file('inside.txt'), 'in\n', 'the command ran without a click');
    assert.equal(web.hits(), 0, 'the sandbox let nothing through');
    const w = JSON.parse(waiting.stdout) as { run: { run_id: string }; pending: Record<string, unknown>[] };
    const runId = w.run.run_id;
    assert.deepEqual(
      w.pending.map((p) => [p.tool_call_id, p.sandbox_blocked]),
      [['call_1', { domains: ['127.0.0.1'], writes: [], unix_sockets: false, process_limit: false }]],
      'what waits is the retry of a blocked command, not a first approval',
    );

    const shown = await cli(['show', runId, ...at], env);
    assert.match(shown.stdout, /Waiting for approval \(1\):\n {2}call_1 +run_command echo in/);
    assert.match(shown.stdout, /--allow-domains .* or --outside-sandbox/);
    const plain = await cli(['approve', runId, 'call_1', ...at], env);
    assert.equal(plain.code, 1);
    assert.match(
      plain.stderr,
      /the sandbox blocked call_1 \(it was refused 127\.0\.0\.1\): approve it with --allow-domains/,
    );
    assert.equal(file('tries.txt'), 'try\n', 'a plain approve ran nothing');

    const done = await cli(['approve', runId, 'call_1', '--allow-domains', ...at], env);
    assert.equal(done.code, 0, done.stderr);
    assert.equal(file('tries.txt'), 'try\ntry\n', 'ran exactly once more');
    assert.equal(file('got.txt'), 'reached\n');
    assert.equal(web.hits(), 1);
  });
});
