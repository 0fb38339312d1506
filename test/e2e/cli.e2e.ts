// The command line on the window's own runs: a run started in VS Code waits for an approval when
// VS Code goes away (quit hard, the laptop closed); in a terminal, the packaged `agent-waypoints`
// finds the run where the extension keeps it, says what waits, and — approved there — finishes it;
// VS Code, opened again, shows it finished. Everything real: the installed VSIX's dist/cli.js, the
// scripted model server over HTTP, checkpoints on disk.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { makeTempDir } from '../support/codeServer';
import { keepFailure, scaled, waitUntil, Workbench } from './harness';

const TASK = 'Record the approval from a terminal';

const SCENARIO: Scenario = {
  name: 'e2e-cli',
  description: 'offline demo model: one command that needs approval, then a final answer',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    {
      reply: {
        content: '(offline demo model) Recording the approval.',
        tool_calls: [{ name: 'run_command', arguments: { command: 'echo approved >> effects.txt' } }],
      },
    },
    { reply: { content: '(offline demo model) Done from the terminal.' } },
  ],
};

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The package's bin as a terminal runs it: its own process, only the environment given (plus PATH and HOME). */
function agentWaypoints(bin: string, args: string[], env: Record<string, string>, cwd: string): Promise<CliResult> {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

function lines(file: string): string[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

describe('e2e: the command line continues a run the window left', () => {
  let model: ModelServer | undefined;
  let wb: Workbench | undefined;
  // The user's Agent Waypoints folder, where the extension records each workspace's store for the command line.
  const home = makeTempDir('agent-home');
  before(async () => (model = await startModelServer({ scenario: SCENARIO })));
  afterEach(async function () {
    if (wb && this.currentTest?.state === 'failed') await keepFailure(wb, this.currentTest.fullTitle());
  });
  after(async () => {
    await wb?.close();
    await model?.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('(u) approval waiting, VS Code gone → `agent-waypoints show`, `approve` in a terminal → finished; VS Code opened again shows it finished', async () => {
    const settings = {
      'agentWaypoints.provider.baseUrl': model!.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
    };
    const env = { AGENT_WAYPOINTS_HOME: home };
    wb = await Workbench.start({ settings, env });
    await wb.startRun(TASK);
    await wb.webviewFrame('section.approval', 60_000);
    const effects = path.join(wb.workspace, 'effects.txt');
    assert.deepEqual(lines(effects), [], 'nothing ran before an approval');

    await wb.shutDown();

    const bin = path.join(await Workbench.installedExtensionDir(), 'dist', 'cli.js');
    const terminal = {
      ...env,
      AGENT_WAYPOINTS_BASE_URL: model!.url,
      AGENT_WAYPOINTS_MODEL: DEMO_MODEL_ID,
    };
    const cwd = wb.workspace;
    const listed = await agentWaypoints(bin, ['list', '--json'], terminal, cwd);
    assert.equal(listed.code, 0, listed.stderr);
    const runs = (JSON.parse(listed.stdout) as { runs: { run_id: string; title: string; state: string }[] }).runs;
    const run = runs.find((r) => r.title.includes(TASK));
    assert.ok(run, `the window's run is listed: ${listed.stdout}`);
    assert.equal(run.state, 'awaiting_approval');

    const shown = await agentWaypoints(bin, ['show', run.run_id], terminal, cwd);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /echo approved >> effects\.txt/, 'show names the waiting command');

    const approved = await agentWaypoints(bin, ['approve', run.run_id, '--all'], terminal, cwd);
    assert.equal(approved.code, 0, `approve finishes the run: ${approved.stdout}\n${approved.stderr}`);
    assert.deepEqual(lines(effects), ['approved'], 'the approved command ran once, in the terminal');

    wb = await wb.reopen(env);
    await wb.openRunsView();
    const sidebar = wb.page.locator('#workbench\\.parts\\.sidebar');
    await sidebar.getByText('Finished', { exact: true }).click();
    await sidebar.getByText(TASK).waitFor({ timeout: scaled(30_000) });
    await sidebar.getByText(TASK).click();
    await sidebar
      .locator('.monaco-list-row', { hasText: 'Step 2 · final answer' })
      .waitFor({ timeout: scaled(30_000) });
    await wb.screenshot('e2e-u-finished-from-terminal');
    await waitUntil('nothing ran again after the reopen', () => lines(effects).length === 1);
    assert.deepEqual(lines(effects), ['approved']);
  });
});
