// The command policy in the packaged extension (issue 18, finding 1): the VSIX ships the bash
// grammar (WASM) and the argv runner, and they load in code-server. An allow-listed line runs
// without an approval card (only possible once the grammar has read it), from its words without a
// shell; a line hiding a second command behind a comment shows an approval card that says so, and
// nothing of it runs before the click. Before any run, in the same workbench: the installed VSIX's
// activity-bar entry, its empty Runs view with the welcome message, and a command from the palette.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { waitUntil, scaled } from './harness';
import { scenarioOf, sharedWorkbench } from './shared';

const HIDDEN = "touch visible #'\ntouch PWNED\n#'";

const SCENARIO: Scenario = {
  name: 'e2e-command-policy',
  description: 'offline demo model: an allow-listed command, then one hiding a second command behind a comment',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    {
      reply: {
        content: '(offline demo model) Touching two files.',
        tool_calls: [{ name: 'run_command', arguments: { command: `touch 'made by' "argv;runner"` } }],
      },
    },
    {
      reply: {
        content: '(offline demo model) One more.',
        tool_calls: [{ name: 'run_command', arguments: { command: HIDDEN } }],
      },
    },
    { reply: { content: '(offline demo model) Done.' } },
  ],
};

/** One workbench: the first block needs it before any run (the empty Runs view), the second makes one. */
const shared = sharedWorkbench(
  scenarioOf('e2e-commands', [{ task: 'Touch the files', turns: SCENARIO.turns }]),
  (model) => ({
    settings: {
      'agentWaypoints.provider.baseUrl': model.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      'agentWaypoints.approval.commandAllowList': ['touch'],
      'agentWaypoints.approval.commandDenyList': ['rm'],
    },
  }),
);

describe('e2e: the installed VSIX in a real workbench', () => {
  const workbench = shared.use();

  it('shows the Agent Waypoints activity-bar container and an empty Runs view with a welcome message', async () => {
    const wb = workbench();
    const entry = wb.page.locator('.activitybar [aria-label^="Agent Waypoints"]').first();
    await entry.click();
    const sidebar = wb.page.locator('#workbench\\.parts\\.sidebar');
    await sidebar.getByText('No agent runs yet', { exact: false }).waitFor({ timeout: scaled(30_000) });
    assert.ok(
      await sidebar.getByRole('button', { name: 'Set API key' }).isVisible(),
      'welcome view offers Set API key',
    );
    await wb.screenshot('e2e-empty-runs-view');
    // The welcome view's button is the real command: it asks for the task.
    await sidebar.locator('.welcome-view').getByRole('button', { name: 'Start agent run' }).click();
    await wb.page
      .locator('.quick-input-widget', { hasText: 'What should the agent do?' })
      .waitFor({ state: 'visible', timeout: scaled(30_000) });
    await wb.page.keyboard.press('Escape');
  });

  it('runs a command from the palette: Show log opens the Agent Waypoints output', async () => {
    const wb = workbench();
    await wb.runCommand('Agent Waypoints: Show log');
    const panel = wb.page.locator('#workbench\\.parts\\.panel');
    await panel.getByText('activated (storage:', { exact: false }).waitFor({ timeout: scaled(30_000) });
  });
});

describe('e2e: the command policy in the packaged extension', () => {
  const workbench = shared.use();

  it('an allow-listed line runs without asking; a line hiding a command behind a comment asks, saying so', async () => {
    const wb = workbench();
    await wb.runCommand('Agent Waypoints: Start agent run');
    await wb.page
      .locator('.quick-input-widget', { hasText: 'What should the agent do?' })
      .waitFor({ state: 'visible' });
    const input = wb.page.locator('.quick-input-widget input');
    await input.fill('Touch the files');
    await input.press('Enter');

    const exists = (name: string) => fs.existsSync(path.join(wb.workspace, name));
    await waitUntil('the allow-listed command to run', () => exists('made by') && exists('argv;runner'));
    const frame = await wb.webviewFrame('section.approval', 60_000);
    const card = await frame.locator('section.approval').first().innerText();
    assert.match(card, /a comment, which may hide what follows it/);
    await wb.screenshot('e2e-command-policy-approval');
    assert.equal(exists('visible'), false, 'the hidden line waits for the user');
    assert.equal(exists('PWNED'), false, 'the hidden line waits for the user');
  });
});
