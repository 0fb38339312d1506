// The shared run store as a user meets it, on a real PostgreSQL cluster: "Connect a shared run
// store…" from the palette, a reload, a run started there (its rows in the database, under the
// project's name); then the database stopped — the Runs view says "Shared store unreachable" and
// keeps retrying — and started again — the message goes and the run is listed as before.
import assert from 'node:assert/strict';
import pg from 'pg';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID } from '../fixtures/modelServer/scenario';
import { startCluster, type PgCluster } from '../support/postgres';
import { useWorkbench, waitUntil, scaled } from './harness';

const PROJECT = 'e2e shared project';

describe('e2e: the shared run store (PostgreSQL)', function () {
  let cluster: PgCluster;
  let model: ModelServer;
  before(async () => {
    cluster = startCluster({ fsync: false });
    model = await startModelServer({
      scenario: {
        name: 'e2e-shared',
        description: 'offline demo model: one answer',
        model: DEMO_MODEL_ID,
        subconversations: [],
        turns: [{ reply: { content: '(offline demo model) Done, stored in the shared store.' } }],
      },
    });
  });
  after(async () => {
    await model?.close();
    cluster?.destroy();
  });
  const workbench = useWorkbench(() => ({
    settings: {
      'agentWaypoints.provider.baseUrl': model.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      'agentWaypoints.store.workspaceName': PROJECT,
    },
  }));

  const sharedRuns = async () => {
    const c = new pg.Client({ connectionString: cluster.url() });
    await c.connect();
    try {
      const r = await c.query(`SELECT meta FROM agent_waypoints.runs WHERE workspace = $1`, [`name:${PROJECT}`]);
      return r.rows.map((x: { meta: string }) => (JSON.parse(x.meta) as { title: string }).title);
    } finally {
      await c.end();
    }
  };

  it('connect from the palette, reload, run there; the database away → the Runs view says so and retries; back → gone', async () => {
    const wb = workbench();
    await wb.runCommand('Agent Waypoints: Connect a shared run store…');
    const input = wb.page.locator('.quick-input-widget input');
    await wb.page.locator('.quick-input-widget', { hasText: 'SecretStorage' }).waitFor({ state: 'visible' });
    await input.fill(cluster.url());
    await input.press('Enter');
    const toast = await wb.settledNotification('shared run store ready', 60_000);
    assert.match(await toast.innerText(), /will be created on first use/);
    await wb.screenshot('e2e-shared-connected');

    await wb.reload();
    await wb.openRunsView();
    const sidebar = wb.page.locator('#workbench\\.parts\\.sidebar');
    // The extension is up and has read the shared store (an empty project): its view drew its welcome.
    await sidebar.getByText('No agent runs yet', { exact: false }).waitFor({ timeout: scaled(60_000) });
    await wb.startRun('Say where this run is stored');
    await waitUntil('the run in the shared database', async () => (await sharedRuns()).length === 1, 60_000);
    await sidebar.getByText('Finished', { exact: false }).first().click(); // the run's group, collapsed at first
    await sidebar
      .getByText('Say where this run is stored')
      .first()
      .waitFor({ timeout: scaled(30_000) });

    cluster.stopServer('immediate');
    await wb.runCommand('Agent Waypoints: Refresh runs'); // a focus or a refresh asks the database
    const message = sidebar.getByText('Shared store unreachable', { exact: false }).first();
    await message.waitFor({ timeout: scaled(60_000) });
    assert.match(await message.innerText(), /Retrying every 10 s; runs on this machine stay usable/);
    await sidebar
      .getByText('Say where this run is stored')
      .first()
      .waitFor({ timeout: scaled(10_000) });
    await wb.screenshot('e2e-shared-unreachable');

    cluster.start();
    await message.waitFor({ state: 'detached', timeout: scaled(60_000) }); // the retry reached it
    await sidebar
      .getByText('Say where this run is stored')
      .first()
      .waitFor({ timeout: scaled(10_000) });
    await wb.screenshot('e2e-shared-back');
  });
});
