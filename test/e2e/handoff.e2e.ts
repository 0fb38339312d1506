// A run handed to a worker and brought back, in the real workbench on a real PostgreSQL cluster: a
// run waiting for its first command's approval → *Continue in background* in the run view's header →
// an `agent-waypoints worker` process (the installed VSIX's dist/cli.js, its own checkout) takes it →
// the view shows the worker's steps as they are written → each approval card is approved in the view
// and the worker continues (timed: the click → the worker's next record in the database) → *Bring
// back here* → the preview → the files the worker wrote are in the window's checkout.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { makeTempDir } from '../support/codeServer';
import { startCluster, type PgCluster } from '../support/postgres';
import { repoRoot, scaled, useWorkbench, waitUntil, Workbench } from './harness';

const PROJECT = 'e2e handoff project';
const TASK = 'Write two notes in the background';
const command = (line: string) => ({
  reply: {
    content: `(offline demo model) Writing ${line}.`,
    tool_calls: [{ name: 'run_command', arguments: { command: `echo ${line} >> notes.txt` } }],
  },
});
const SCENARIO: Scenario = {
  name: 'e2e-handoff',
  description: 'offline demo model: two commands that need approval, then an answer',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [command('first'), command('second'), { reply: { content: '(offline demo model) Both notes written.' } }],
};

/** The database's change feed, heard by the test: when each commit of the run landed. */
class Commits {
  private readonly client: pg.Client;
  readonly at: { runId: string; ms: number }[] = [];
  constructor(url: string) {
    this.client = new pg.Client({ connectionString: url });
    this.client.on('notification', (n) => {
      const c = JSON.parse(n.payload ?? '{}') as { kind?: string; run_id?: string };
      if (c.kind === 'commit' && c.run_id) this.at.push({ runId: c.run_id, ms: performance.now() });
    });
  }
  async listen(): Promise<void> {
    await this.client.connect();
    await this.client.query('LISTEN agent_waypoints');
  }
  /** The first commit of any run after `since` (performance.now()). */
  next(since: number): Promise<number> {
    return waitUntil('the worker’s next record', () => this.at.some((c) => c.ms > since), 30_000).then(
      () => this.at.find((c) => c.ms > since)!.ms,
    );
  }
  close(): Promise<void> {
    return this.client.end();
  }
}

describe('e2e: continue in background, approve from the view, bring back here', function () {
  let cluster: PgCluster;
  let model: ModelServer;
  let worker: ChildProcess | undefined;
  let workerLog = '';
  let commits: Commits | undefined;
  before(async () => {
    cluster = startCluster({ fsync: false });
    model = await startModelServer({ scenario: SCENARIO });
  });
  after(async () => {
    if (worker && worker.exitCode === null) worker.kill('SIGKILL');
    await commits?.close().catch(() => undefined);
    await model?.close();
    cluster?.destroy();
    if (workerLog) fs.writeFileSync(path.join(repoRoot, 'test-results', 'e2e-handoff-worker.log'), workerLog);
  });
  afterEach(function () {
    if (this.currentTest?.state !== 'failed') return;
    console.log("    the worker's last lines:");
    for (const line of workerLog.trimEnd().split('\n').slice(-15)) console.log(`      ${line}`);
  });
  const workbench = useWorkbench(() => ({
    settings: {
      'agentWaypoints.provider.baseUrl': model.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      'agentWaypoints.store.workspaceName': PROJECT,
    },
  }));

  /** `agent-waypoints worker` on its own copy of the project, once it listens. */
  async function startWorker(): Promise<string> {
    const home = makeTempDir('worker-home');
    const checkout = makeTempDir('worker-checkout');
    fs.cpSync(path.join(repoRoot, 'test/fixtures/workspace'), checkout, { recursive: true });
    fs.writeFileSync(path.join(home, 'agent-waypoints.json'), JSON.stringify({ store: { workspaceName: PROJECT } }));
    const bin = path.join(await Workbench.installedExtensionDir(), 'dist', 'cli.js');
    worker = spawn(process.execPath, [bin, 'worker', '--workspace', checkout, '--name', 'e2e-worker'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        AGENT_WAYPOINTS_HOME: home,
        AGENT_WAYPOINTS_BASE_URL: model.url,
        AGENT_WAYPOINTS_MODEL: DEMO_MODEL_ID,
        AGENT_WAYPOINTS_PG_URL: cluster.url(),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    worker.stdout!.on('data', (d: Buffer) => (workerLog += d.toString()));
    worker.stderr!.on('data', (d: Buffer) => (workerLog += d.toString()));
    await waitUntil('the worker to listen', () => workerLog.includes('listening for runs'), 60_000);
    return checkout;
  }

  it('(w) Continue in background → a worker takes it → its steps live in the view → approved there → Bring back here', async () => {
    const wb = workbench();
    await wb.runCommand('Agent Waypoints: Connect a shared run store…');
    const input = wb.page.locator('.quick-input-widget input');
    await wb.page.locator('.quick-input-widget', { hasText: 'SecretStorage' }).waitFor({ state: 'visible' });
    await input.fill(cluster.url());
    await input.press('Enter');
    await wb.settledNotification('shared run store ready', 60_000);
    await wb.reload();
    await wb.openRunsView();
    const sidebar = wb.page.locator('#workbench\\.parts\\.sidebar');
    await sidebar.getByText('No agent runs yet', { exact: false }).waitFor({ timeout: scaled(60_000) });

    await wb.startRun(TASK);
    let frame = await wb.webviewFrame('section.approval', 60_000);
    const notes = path.join(wb.workspace, 'notes.txt');
    assert.equal(fs.existsSync(notes), false, 'nothing ran before an approval');

    const checkout = await startWorker();
    commits = new Commits(cluster.url());
    await commits.listen();
    await wb.clickInWebview(frame, 'Continue in background');
    await wb.settledNotification('continues in the background', 30_000);
    // The worker takes it, finds it waiting, and lets go until a decision comes: the header says so.
    frame = await wb.webviewFrame('text=it waits for a decision', 60_000);
    await sidebar
      .getByText('with the workers, waiting for a decision', { exact: false })
      .first()
      .waitFor({ timeout: scaled(30_000) });
    await wb.screenshot('e2e-w-handed-off');

    const delays: number[] = [];
    const approve = async (line: string) => {
      const card = frame.locator('section.approval', { hasText: `echo ${line}` }).first();
      await card.waitFor({ timeout: scaled(60_000) });
      const clicked = performance.now();
      await card.locator('vscode-button', { hasText: 'Approve' }).first().click();
      delays.push((await commits!.next(clicked)) - clicked);
    };
    await approve('first');
    // The worker ran it and asked about the next one: its step shows here as it is written.
    await approve('second');
    await frame
      .getByText('Both notes written.')
      .first()
      .waitFor({ timeout: scaled(60_000) });
    await waitUntil('the worker’s notes', () => fs.existsSync(path.join(checkout, 'notes.txt')));
    assert.deepEqual(fs.readFileSync(path.join(checkout, 'notes.txt'), 'utf8').split('\n').filter(Boolean), [
      'first',
      'second',
    ]);
    assert.equal(fs.existsSync(notes), false, 'the window’s checkout is untouched until it is brought back');
    await wb.screenshot('e2e-w-finished-by-worker');
    process.stdout.write(
      `      decision in the view → the worker's next record: ${delays.map((d) => `${d.toFixed(0)} ms`).join(', ')}\n`,
    );
    // The issue asks ≤ 1 s; the bound here is for a loaded machine (a click reaches the host through two frames).
    for (const d of delays) assert.ok(d < scaled(5000), `decision → next record took ${d.toFixed(0)} ms`);

    await wb.clickInWebview(frame, 'Bring back here');
    const row = wb.page
      .locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: 'notes.txt' })
      .first();
    await row.waitFor({ state: 'visible', timeout: scaled(60_000) });
    await wb.screenshot('e2e-w-bring-back-preview');
    const planned = (await row.innerText()).replace(/\s+/g, ' ');
    assert.match(planned, /will be restored/, `the preview's row of notes.txt: ${planned}`);
    assert.equal(fs.existsSync(notes), false, 'nothing changes before Enter');
    await input.press('Enter');
    await wb.heldNotification('Brought back 1 file', 60_000);
    await waitUntil('the notes brought here', () => fs.existsSync(notes));
    assert.deepEqual(fs.readFileSync(notes, 'utf8').split('\n').filter(Boolean), ['first', 'second']);
    await wb.screenshot('e2e-w-brought-back');
  });
});
