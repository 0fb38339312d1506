// The command policy in the packaged extension (issue 18, finding 1): the VSIX ships the bash
// grammar (WASM) and the argv runner, and they load in code-server. An allow-listed line runs
// without an approval card (only possible once the grammar has read it), from its words without a
// shell; a line hiding a second command behind a comment shows an approval card that says so, and
// nothing of it runs before the click.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { useWorkbench, waitUntil } from './harness';

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

describe('e2e: the command policy in the packaged extension', () => {
  let server: ModelServer | undefined;
  before(async () => (server = await startModelServer({ scenario: SCENARIO })));
  after(async () => server?.close());
  const workbench = useWorkbench(() => ({
    settings: {
      'agentWaypoints.provider.baseUrl': server!.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      'agentWaypoints.approval.commandAllowList': ['touch'],
      'agentWaypoints.approval.commandDenyList': ['rm'],
    },
  }));

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
