// The headless runner as a user meets it: `agent-waypoints` spawned as its own process (bundled as
// dist/cli.js is), the real openai client over HTTP to the scripted model server, real store files.
// A run waits for an approval (exit 2), is approved from the command line and finishes (exit 0), its
// --json answers parse with stable fields, and the API key is never in an argument, an output or the
// store. A run a VS Code window started (the store where the extension keeps it, found through the
// record the extension writes) and left interrupted is refused while the window holds it — naming
// the window — then resumed by the command line and shown finished to the window's store. Ctrl-C
// mid-run leaves it paused and resumable. With a shared store's connection string, new runs go to
// the shared store, as in a window whose store kind is postgres.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { checkpointStorageDir, recordStorageDir } from '../../../src/storageDir';
import { openDiskStore, openPgStoreReady } from '../../../src/store';
import { sharedPostgres } from '../../support/postgres';
import { DEMO_MODEL_ID, type ScenarioInput } from '../../fixtures/modelServer/scenario';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { cli, cliBundle, startCli, type CliResult } from '../../support/cliProcess';
import { waitFor } from '../runner/helpers';
import { makeRunner, owner, tmp } from '../loop/support';

const KEY = `sk-cli-test-${Math.random().toString(36).slice(2)}`;

const writeThenAnswer: ScenarioInput = {
  name: 'cli-write',
  description: 'offline demo model: one file write, then an answer',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    {
      reply: {
        content: null,
        tool_calls: [{ id: 'call_w', name: 'write_file', arguments: { path: 'hello.txt', content: 'hi\n' } }],
      },
    },
    { reply: { content: 'wrote hello.txt' } },
  ],
};

/** A write and a command that prints its environment: both ask; what `env` prints goes to the store and the model. */
const writeAndEnv: ScenarioInput = {
  name: 'cli-write-env',
  description: 'offline demo model: a file write and `env`, then an answer',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    {
      reply: {
        content: null,
        tool_calls: [
          { id: 'call_w', name: 'write_file', arguments: { path: 'hello.txt', content: 'hi\n' } },
          { id: 'call_env', name: 'run_command', arguments: { command: 'env' } },
        ],
      },
    },
    { reply: { content: 'wrote hello.txt' } },
  ],
};

/** The model does not answer the first request (until the client gives up or stops); asked again, it reads a file, then answers. */
const stalledFirst: ScenarioInput = {
  name: 'cli-stalled',
  description: 'offline demo model: stalls once, then reads a file and answers',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    {
      fault: { kind: 'timeout' },
      times: 1,
      reply: { content: null, tool_calls: [{ id: 'call_r', name: 'read_file', arguments: { path: 'a.txt' } }] },
    },
    { reply: { content: 'read it' } },
  ],
};

function json(r: CliResult): Record<string, unknown> {
  assert.equal(r.stderr.includes('agent-waypoints:'), false, r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => fs.statSync(f).isFile());
}

describe('agent-waypoints, the headless runner', function () {
  this.timeout(120_000);
  let server: ModelServer;
  let home: string;
  let workspace: string;
  let env: Record<string, string>;
  before(() => cliBundle());
  beforeEach(() => {
    home = tmp('cli-home');
    workspace = tmp('cli-ws');
    fs.writeFileSync(path.join(workspace, 'a.txt'), 'alpha\n');
  });
  afterEach(async () => server?.close());

  const start = async (scenario: ScenarioInput, apiKey?: string) => {
    server = await startModelServer({ scenario, ...(apiKey ? { apiKey } : {}) });
    env = { AGENT_WAYPOINTS_HOME: home, AGENT_WAYPOINTS_BASE_URL: server.url, AGENT_WAYPOINTS_MODEL: DEMO_MODEL_ID };
  };

  it('run waits for the write and the command (exit 2), approve finishes it (exit 0); --json is stable; the key is nowhere but the request', async () => {
    await start(writeAndEnv, KEY);
    const store = tmp('cli-store');
    env = { ...env, AGENT_WAYPOINTS_API_KEY: KEY };
    const at = ['--store', store, '--workspace', workspace];
    const outputs: CliResult[] = [];
    const run = async (...args: string[]) => {
      const r = await cli([...args, ...at], env);
      outputs.push(r);
      return r;
    };

    const waiting = await run('run', 'write hello.txt', '--json');
    assert.equal(waiting.code, 2, waiting.stderr);
    const w = json(waiting);
    assert.deepEqual(Object.keys(w).sort(), ['final_text', 'pending', 'run']);
    const r = w.run as Record<string, unknown>;
    assert.deepEqual(Object.keys(r).sort(), [
      'detail',
      'model',
      'pending_approvals',
      'run_id',
      'state',
      'step',
      'title',
      'updated_ms',
    ]);
    assert.equal(r.state, 'awaiting_approval');
    const pending = w.pending as Record<string, unknown>[];
    assert.deepEqual(Object.keys(pending[0]!).sort(), [
      'arguments',
      'decided_by',
      'input_hash',
      'reason',
      'status',
      'step',
      'tool',
      'tool_call_id',
    ]);
    assert.deepEqual(
      [pending[0]!.tool_call_id, pending[0]!.tool, pending[0]!.status],
      ['call_w', 'write_file', 'waiting'],
    );
    assert.equal(fs.existsSync(path.join(workspace, 'hello.txt')), false, 'nothing written before the decision');
    assert.match(waiting.stderr, /waiting for approval: call_w write_file hello\.txt/, 'progress on stderr');

    const runId = r.run_id as string;
    const shown = json(await run('show', runId.slice(0, 12), '--json'));
    assert.deepEqual(Object.keys(shown).sort(), ['calls', 'final_text', 'held_by', 'pending', 'run']);
    assert.equal(shown.held_by, null);

    assert.deepEqual(
      pending.map((p) => p.tool_call_id),
      ['call_w', 'call_env'],
    );
    const approved = await run('approve', runId, '--all', '--json', '--quiet');
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal(approved.stderr, '', '--quiet: no progress');
    const a = json(approved);
    assert.equal((a.run as Record<string, unknown>).state, 'completed');
    assert.equal(a.final_text, 'wrote hello.txt');
    assert.equal(fs.readFileSync(path.join(workspace, 'hello.txt'), 'utf8'), 'hi\n');

    const after = json(await run('show', runId, '--json'));
    const call = (after.calls as Record<string, unknown>[])[0]!;
    assert.equal(call.status, 'ran');
    assert.equal((call.decided_by as Record<string, unknown>).via, 'cli');
    const human = await run('show', runId);
    assert.match(human.stdout, /call_w\s+ran\s+write_file hello\.txt\s+by \S+@\S+ \(command line\)/);
    const listed = json(await run('list', '--json', '--state', 'completed'));
    assert.deepEqual(
      (listed.runs as Record<string, unknown>[]).map((x) => x.run_id),
      [runId],
    );

    // The key reached the server (it answers nothing without it) and nothing else: not the command
    // the agent ran (its environment went to the store and the model), not an output, not the store.
    const sent = JSON.stringify(server.requests.map((q) => q.raw_messages));
    assert.match(sent, /AGENT_WAYPOINTS_MODEL=/, 'what env printed reached the model');
    assert.equal(sent.includes(KEY), false, 'never in what the command of the agent printed');
    assert.ok(server.requests.length >= 2);
    for (const o of outputs) assert.equal(`${o.stdout}${o.stderr}`.includes(KEY), false, 'never in an output');
    for (const f of filesUnder(store)) assert.equal(fs.readFileSync(f, 'latin1').includes(KEY), false, `never in ${f}`);
    const reopened = openDiskStore(store);
    assert.equal(JSON.stringify(await reopened.exportRun(runId)).includes(KEY), false, 'never in the run');
    await reopened.close();
  });

  it("a run a VS Code window left interrupted: refused while the window holds it, then resumed here and finished in the window's store", async () => {
    await start(stalledFirst);
    // Where VS Code puts the extension's storage for a workspace, and what root.ts does with it.
    const storageUri = path.join(
      tmp('user-data'),
      'User',
      'workspaceStorage',
      '3f2a9c1e',
      'agent-waypoints.agent-waypoints',
    );
    fs.mkdirSync(storageUri, { recursive: true });
    const storageDir = checkpointStorageDir(storageUri);
    await recordStorageDir(workspace, storageDir, home);
    const window = makeRunner({ storeDir: storageDir, workspace, baseURL: server.url, deps: { storageDir } });
    const h = await window.runner.start({ task: 'read a.txt' });
    await waitFor(() => server.requests.length >= 1, 20_000);
    await window.runner.shutdown(); // the window closes while the model is thinking
    assert.equal((await window.store.getRun(h.runId))?.state, 'interrupted');

    // The window (opened again) holds the run: the command line says who, and leaves it alone.
    const held = await window.store.acquire(h.runId, owner('VS Code window “demo”'));
    const refused = await cli(['resume', h.runId, '--workspace', workspace], env);
    assert.equal(refused.code, 5, refused.stderr);
    assert.match(refused.stderr, /held by VS Code window “demo” \(pid \d+ on /);
    await held.release();
    await window.store.close();

    const resumed = await cli(['resume', h.runId.slice(0, 10)], env, workspace); // the workspace: the current folder
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /^completed /);
    assert.match(resumed.stdout, /read it/);

    // The window opens the store as the extension does: the run is finished there.
    const reopened = openDiskStore(checkpointStorageDir(storageUri));
    const runs = (await reopened.listRuns()).runs;
    assert.deepEqual(
      runs.map((x) => [x.run_id, x.state]),
      [[h.runId, 'completed']],
    );
    await reopened.close();
  });

  it('Ctrl-C mid-run pauses it at a safe point (exit 3); resume finishes it', async () => {
    await start(stalledFirst);
    const store = tmp('cli-store');
    const p = await startCli(['run', 'read a.txt', '--store', store, '--workspace', workspace], env);
    await waitFor(() => server.requests.length >= 1, 20_000);
    p.child.kill('SIGINT');
    const stopped = await p.done;
    assert.equal(stopped.code, 3, stopped.stderr);
    assert.match(stopped.stderr, /stopping run \S+ at a safe point/);
    const runId = /^paused_cancelled {2}(\S+)/m.exec(stopped.stdout)?.[1];
    assert.ok(runId, stopped.stdout);
    assert.match(stopped.stdout, new RegExp(`Continue: agent-waypoints resume ${runId}`));

    const resumed = await cli(['resume', runId, '--store', store, '--workspace', workspace, '--json'], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal((json(resumed).run as Record<string, unknown>).state, 'completed');
  });

  it('with AGENT_WAYPOINTS_PG_URL, a run goes to the shared store under the workspace identity', async () => {
    await start(writeThenAnswer);
    const name = `cli-${Math.random().toString(36).slice(2)}`;
    const config = path.join(home, 'agent-waypoints.json');
    fs.writeFileSync(config, JSON.stringify({ store: { workspaceName: name }, approval: { write: 'auto' } }));
    const local = tmp('cli-local');
    await recordStorageDir(workspace, local, home);
    const url = sharedPostgres().url();
    const done = await cli(['run', 'write hello.txt', '--workspace', workspace, '--json'], {
      ...env,
      AGENT_WAYPOINTS_PG_URL: url,
    });
    assert.equal(done.code, 0, done.stderr);
    const runId = (json(done).run as Record<string, unknown>).run_id as string;
    const shared = await openPgStoreReady({ connectionString: url, workspace: `name:${name}` });
    assert.equal((await shared.getRun(runId))?.state, 'completed');
    await shared.close();
    const localStore = openDiskStore(local);
    assert.equal(await localStore.getRun(runId), undefined, 'not in the local store');
    await localStore.close();
  });
});
