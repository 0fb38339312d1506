// MCP in the real workbench with the packaged VSIX: a workspace whose `.vscode/mcp.json` names
// server-everything (from npm) and a server that cannot start. The run's MCP cards are approved in
// the run view, one tool is "always allowed" from its card (its next call runs without asking), the
// servers' states and the always-allowed list show in the Runs view, the tool is revoked there and
// asks again. A SIGKILL of the extension host mid-call brings the call back as "may already have run".
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { makeTempDir } from '../support/codeServer';
import { repoRoot, useWorkbench, type Workbench, scaled } from './harness';
import { scenarioOf, sharedWorkbench } from './shared';

const EVERYTHING = path.join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

const scenario = (name: string, turns: Scenario['turns']): Scenario => ({
  name,
  description: `offline demo model: ${name}`,
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns,
});
const call = (name: string, args: Record<string, unknown> = {}) => ({
  reply: { content: `(offline demo model) Calling ${name}.`, tool_calls: [{ name, arguments: args }] },
});

const SERVERS = {
  everything: { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
  broken: { type: 'stdio', command: path.join(repoRoot, 'no-such-mcp-server') },
};

/** test/fixtures/workspace plus a `.vscode/mcp.json` in VS Code's format. */
function workspaceWithMcp(config: Record<string, unknown>): string {
  const dir = path.join(makeTempDir('e2e-mcp-template'), 'workspace');
  fs.cpSync(path.join(repoRoot, 'test/fixtures/workspace'), dir, { recursive: true });
  fs.mkdirSync(path.join(dir, '.vscode'));
  fs.writeFileSync(path.join(dir, '.vscode/mcp.json'), JSON.stringify(config, null, 2));
  return dir;
}

function scripted(
  played: Scenario | (() => Scenario),
  config: Record<string, unknown> = { servers: SERVERS },
): { workbench: () => Workbench; model: () => ModelServer } {
  let server: ModelServer | undefined;
  before(async () => (server = await startModelServer({ scenario: typeof played === 'function' ? played() : played })));
  after(async () => server?.close());
  const model = () => server!;
  const workbench = useWorkbench(() => ({
    workspaceTemplate: workspaceWithMcp(config),
    settings: { 'agentWaypoints.provider.baseUrl': model().url, 'agentWaypoints.provider.model': DEMO_MODEL_ID },
  }));
  return { workbench, model };
}

function userSettings(wb: Workbench): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(wb.userDataDir, 'User', 'settings.json'), 'utf8'));
}

async function until(what: string, probe: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + scaled(ms);
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * A second a step, and steps enough that the long call still runs when the crash test, having seen the
 * first step's progress, kills the host: more as the machine's load makes the test slower, up to the
 * 30 s that always sufficed. It runs twice (before the crash and once approved after it), so no longer.
 * Set when the shared workbench starts, right before that test (the first of its blocks).
 */
let seconds = 0;

/**
 * The crash test and the approvals test share one workbench and one `.vscode/mcp.json` (shared.ts):
 * the crash comes first, on a window no run has touched, and its run ends finished.
 */
const servers = sharedWorkbench(
  () => {
    seconds = Math.min(30, Math.round(scaled(12_000) / 1000));
    return scenarioOf('e2e-mcp', [
      {
        task: 'Run the long operation',
        turns: [
          call('everything__trigger-long-running-operation', { duration: seconds, steps: seconds }),
          { reply: { content: '(offline demo model) The long operation finished.' } },
        ],
      },
      {
        task: 'Use the everything server',
        turns: [
          call('everything__get-sum', { a: 2, b: 40 }),
          call('everything__get-tiny-image'),
          call('everything__get-tiny-image'),
          { reply: { content: '(offline demo model) Done with the MCP tools.' } },
          call('everything__get-tiny-image'),
          { reply: { content: '(offline demo model) Asked again after the revoke.' } },
        ],
      },
    ]);
  },
  (model) => ({
    workspaceTemplate: workspaceWithMcp({ servers: SERVERS }),
    settings: { 'agentWaypoints.provider.baseUrl': model.url, 'agentWaypoints.provider.model': DEMO_MODEL_ID },
  }),
);

describe('e2e: SIGKILL of the extension host during an MCP call', () => {
  const workbench = servers.use();

  it('(n) progress in the card → crash → reopen → the call comes back as may already have run → Approve runs it once', async function () {
    this.timeout(scaled(300_000));
    const wb = workbench();
    await wb.startRun('Run the long operation');
    const frame = await wb.webviewFrame('main.transcript', 60_000);
    const card = frame.locator('section.approval', { hasText: 'trigger-long-running-operation' });
    await card.waitFor({ timeout: scaled(60_000) });
    await card.locator('vscode-button', { hasText: 'Approve' }).first().click();
    const progress = frame.locator('section.tool .progress', { hasText: `of ${seconds}` });
    await progress.waitFor({ timeout: scaled(60_000) });
    await wb.screenshot('e2e-n-mcp-progress');

    await wb.crashAndReopen(); // between the call's intent and its result
    await wb.heldNotification('interrupted', 60_000);
    await wb.clickNotificationButton('interrupted', 'Show');
    const view = await wb.webviewFrame('.status.state-interrupted', 60_000);
    await view.locator('.status vscode-button', { hasText: 'Resume' }).click();
    const uncertain = view.locator('section.approval', { hasText: 'trigger-long-running-operation' });
    await uncertain.locator('.warning', { hasText: 'May already have run' }).waitFor({ timeout: scaled(60_000) });
    assert.equal(await uncertain.locator('vscode-button', { hasText: 'Always allow' }).count(), 0);
    await wb.screenshot('e2e-n-mcp-may-already-have-run');
    await uncertain.locator('vscode-button', { hasText: 'Approve' }).first().click();
    await view
      .locator('.msg.assistant.final', { hasText: 'The long operation finished' })
      .waitFor({ timeout: scaled(120_000) });
    const result = view.locator('section.tool', { hasText: 'trigger-long-running-operation' }).locator('pre.output');
    assert.match(
      await result.first().innerText(),
      new RegExp(`Long running operation completed\\. Duration: ${seconds} seconds`),
    );
  });
});

describe('e2e: MCP servers from .vscode/mcp.json', () => {
  const workbench = servers.use();
  const model = servers.model;

  it('(m) approve an MCP card, always allow a tool, see the servers in the Runs view, revoke it there: it asks again', async function () {
    this.timeout(scaled(300_000));
    const wb = workbench();
    const requestsBefore = model().requests.length; // the crash test's, on the same model server
    await wb.startRun('Use the everything server');
    const frame = await wb.webviewFrame('main.transcript', 60_000);

    const sum = frame.locator('section.approval', { hasText: 'everything__get-sum' });
    await sum.waitFor({ timeout: scaled(60_000) });
    assert.match(await sum.innerText(), /get-sum is a tool of MCP server "everything"/);
    await sum.locator('vscode-button', { hasText: 'Approve' }).first().click();
    await frame
      .locator('section.tool', { hasText: 'everything__get-sum' })
      .locator('pre.output', { hasText: 'The sum of 2 and 40 is 42.' })
      .first()
      .waitFor({ timeout: scaled(60_000) });

    const image = frame.locator('section.approval', { hasText: 'everything__get-tiny-image' });
    await image.waitFor({ timeout: scaled(60_000) });
    await image.locator('vscode-button', { hasText: 'Always allow' }).click();
    await frame
      .locator('.msg.assistant.final', { hasText: 'Done with the MCP tools' })
      .waitFor({ timeout: scaled(90_000) });
    assert.equal(await frame.locator('section.approval').count(), 0, 'the second image call did not ask');
    const rules = userSettings(wb)['agentWaypoints.mcp.alwaysAllow'] as { server: string; tool: string }[];
    assert.deepEqual(
      rules.map((r) => `${r.server}/${r.tool}`),
      ['everything/get-tiny-image'],
      'one rule, in the user settings',
    );
    const lastImageCard = frame.locator('section.tool', { hasText: 'everything__get-tiny-image' }).last();
    // Open the card unless it is open already (a card drawn while its call ran stays open).
    if ((await lastImageCard.locator('details[open]').count()) === 0) await lastImageCard.locator('summary').click();
    await lastImageCard.locator('img.rich-image').waitFor({ timeout: scaled(30_000) });
    await wb.screenshot('e2e-m-mcp-run-view');

    // The Runs view: the servers with their state, and the always-allowed list.
    await wb.openRunsView();
    const sidebar = wb.page.locator('#workbench\\.parts\\.sidebar');
    await wb.expandTreeRow(
      sidebar.locator('.monaco-list-row', { hasText: 'MCP servers' }),
      sidebar.locator('.monaco-list-row', { hasText: 'ready · 13 tools' }),
    );
    await sidebar
      .locator('.monaco-list-row', { hasText: 'broken' })
      .locator('text=failed:')
      .waitFor({ timeout: scaled(30_000) });
    await sidebar.locator('.monaco-list-row', { hasText: 'Always allowed' }).click();
    const rule = sidebar.locator('.monaco-list-row', { hasText: 'everything › get-tiny-image' });
    await rule.waitFor({ timeout: scaled(30_000) });
    await wb.screenshot('e2e-m-mcp-runs-view');

    await rule.hover();
    await rule.locator('.action-label[aria-label^="Revoke"]').click();
    await until('the rule removed from the settings', () => {
      const left = userSettings(wb)['agentWaypoints.mcp.alwaysAllow'];
      return Array.isArray(left) && left.length === 0;
    });
    await rule.waitFor({ state: 'detached', timeout: scaled(30_000) });
    await wb.screenshot('e2e-m-mcp-revoked');

    // A follow-up turn calls the revoked tool: it asks again.
    await frame.locator('footer.composer vscode-textarea textarea').fill('Once more, please.');
    await frame.locator('footer.composer vscode-button', { hasText: 'Send' }).click();
    const again = frame.locator('section.approval', { hasText: 'everything__get-tiny-image' });
    await again.waitFor({ timeout: scaled(60_000) });
    await again.locator('vscode-button', { hasText: 'Approve' }).first().click();
    await frame
      .locator('.msg.assistant.final', { hasText: 'Asked again after the revoke' })
      .waitFor({ timeout: scaled(90_000) });
    assert.ok(model().requests.length - requestsBefore >= 6);
  });
});

describe('e2e: an MCP server with a secret input', () => {
  const SECRET = 'tok-e2e-5f1c9a';
  const { workbench } = scripted(
    scenario('e2e-mcp-input', [
      call('secret__echo', { message: 'with a token' }),
      { reply: { content: '(offline demo model) Echoed with the token server.' } },
    ]),
    {
      inputs: [{ type: 'promptString', id: 'e2e-token', description: 'Token for the e2e server', password: true }],
      servers: { secret: { ...SERVERS.everything, env: { E2E_TOKEN: '${input:e2e-token}' } } },
    },
  );

  it('(o) the ${input:…} is asked once in a password box, kept out of settings and the run, not asked again on restart', async function () {
    this.timeout(scaled(240_000));
    const wb = workbench();
    await wb.startRun('Echo with the token server');
    const box = wb.page.locator('.quick-input-widget', { hasText: 'Token for the e2e server' });
    await box.waitFor({ state: 'visible', timeout: scaled(60_000) });
    assert.equal(await box.locator('input').getAttribute('type'), 'password');
    await box.locator('input').fill(SECRET);
    await box.locator('input').press('Enter');
    const frame = await wb.webviewFrame('main.transcript', 60_000);
    const card = frame.locator('section.approval', { hasText: 'secret__echo' });
    await card.waitFor({ timeout: scaled(60_000) });
    await card.locator('vscode-button', { hasText: 'Approve' }).first().click();
    await frame
      .locator('.msg.assistant.final', { hasText: 'Echoed with the token server' })
      .waitFor({ timeout: scaled(90_000) });

    await wb.openRunsView();
    const sidebar = wb.page.locator('#workbench\\.parts\\.sidebar');
    const server = sidebar.locator('.monaco-list-row', { hasText: 'secret' });
    await wb.expandTreeRow(
      sidebar.locator('.monaco-list-row', { hasText: 'MCP servers' }),
      server.locator('text=ready · 13 tools'),
    );
    await server.hover();
    await server.locator('.action-label[aria-label^="Restart MCP server"]').click();
    // Started a second time (the log says so twice), without a prompt: the value came from SecretStorage.
    await until('the server ready again after the restart', () => readyCount(wb) >= 2, 60_000);
    assert.equal(await box.isVisible(), false, 'not asked again');

    const leaks = filesContaining(wb.userDataDir, SECRET);
    assert.deepEqual(leaks, [], "the token is nowhere but in VS Code's secret storage");
    assert.deepEqual(filesContaining(wb.workspace, SECRET), []);
  });
});

/** How often the extension's log says the `secret` server became ready. */
function readyCount(wb: Workbench): number {
  const logs = (fs.readdirSync(wb.userDataDir, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) =>
    f.endsWith('Agent Waypoints.log'),
  );
  const text = logs.map((f) => fs.readFileSync(path.join(wb.userDataDir, f), 'utf8')).join('\n');
  return text.split('MCP server "secret" ready').length - 1;
}

function filesContaining(dir: string, text: string): string[] {
  const hits: string[] = [];
  for (const f of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const file = path.join(dir, f);
    try {
      if (fs.statSync(file).isFile() && fs.readFileSync(file).includes(text)) hits.push(path.relative(dir, file));
    } catch {
      // vanished while we looked (logs rotate): not a hit
    }
  }
  return hits;
}
