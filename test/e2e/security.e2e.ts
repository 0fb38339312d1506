// Issue 18 in the real workbench: the API key typed into Set API key goes to the origin it was typed
// for; a workspace settings file that names another origin brings up VS Code's modal dialog, whose
// answer decides whether the key goes there and is remembered (and forgotten on request). (A write to
// a protected file waiting in its card: sharedBlocks.ts, in agent.e2e.ts's workbench.)
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CHECK_TOOL_NAME } from '../../src/runner/provider/check';
import { originOf } from '../../src/runner/provider/keyOrigin';
import { DEMO_MODEL_ID, type ScenarioInput } from '../fixtures/modelServer/scenario';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { useWorkbench, type Workbench, scaled } from './harness';

const KEY = 'sk-typed-for-one-origin-8080';
const CHECKS: ScenarioInput = {
  name: 'e2e-key-origin',
  description: 'offline demo model: answers connection checks',
  model: DEMO_MODEL_ID,
  turns: [{ reply: { content: '(offline demo model) not a check' } }],
  subconversations: [
    {
      id: 'check',
      user_contains: 'Agent Waypoints connection check',
      turns: [{ reply: { tool_calls: [{ name: CHECK_TOOL_NAME, arguments: { ok: true } }] } }],
    },
  ],
};

/** The workbench's modal dialog (VS Code draws it in the page). */
const dialog = (wb: Workbench) => wb.page.locator('.monaco-dialog-box');

/**
 * Runs Check model connection until the workspace's base URL is in effect, which the dialog shows. VS
 * Code applies a settings file written from outside a moment later: a check that ran before answers
 * from `home` (its notification says so), and is run again at once.
 */
async function checkUntilAsked(wb: Workbench, home: string): Promise<void> {
  const answeredHome = wb.notification(`Connected: \`${DEMO_MODEL_ID}\` at ${home} answered`);
  for (let attempt = 0; ; attempt++) {
    await wb.runCommand('Notifications: Clear All Notifications');
    await wb.runCommand('Agent Waypoints: Check model connection');
    const asked = await Promise.race([
      dialog(wb)
        .waitFor({ state: 'visible', timeout: scaled(15_000) })
        .then(
          () => true,
          () => false,
        ),
      answeredHome.waitFor({ state: 'visible', timeout: scaled(15_000) }).then(
        () => false,
        () => false,
      ),
    ]);
    if (asked) return;
    if (attempt >= 5) throw new Error('the workspace base URL never took effect: no question was asked');
  }
}

describe('e2e: where the API key goes (the real dialog)', () => {
  let entered: ModelServer | undefined;
  let other: ModelServer | undefined;
  before(async () => {
    entered = await startModelServer({ scenario: CHECKS, apiKey: KEY });
    other = await startModelServer({ scenario: CHECKS, apiKey: KEY });
  });
  after(async () => {
    await entered?.close();
    await other?.close();
  });
  const workbench = useWorkbench(() => ({
    settings: {
      'agentWaypoints.provider.baseUrl': entered!.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      'agentWaypoints.provider.maxRetries': 0,
    },
  }));

  it('(s1) a key typed for one origin; a workspace naming another asks; Don’t Send keeps it home, remembered; forgotten and allowed, it goes', async () => {
    const wb = workbench();
    const home = originOf(entered!.url)!;
    const away = originOf(other!.url)!;
    await wb.runCommand('Agent Waypoints: Set API key');
    await wb.page.locator('.quick-input-widget', { hasText: `API key for ${home}` }).waitFor({ state: 'visible' });
    const input = wb.page.locator('.quick-input-widget input');
    await input.fill(KEY);
    await input.press('Enter');
    await wb.notification(`API key saved in SecretStorage, for ${home}`).waitFor({ timeout: scaled(30_000) });

    // A repository's settings (or an agent's write) point the endpoint elsewhere.
    fs.mkdirSync(path.join(wb.workspace, '.vscode'), { recursive: true });
    fs.writeFileSync(
      path.join(wb.workspace, '.vscode/settings.json'),
      JSON.stringify({ 'agentWaypoints.provider.baseUrl': other!.url }, null, 2),
    );
    await checkUntilAsked(wb, entered!.url);
    assert.match(await dialog(wb).innerText(), new RegExp(`This workspace sends your API key to ${away} — allow\\?`));
    await wb.screenshot('e2e-s1-key-question');
    await dialog(wb).getByRole('button', { name: 'Don’t Send' }).click();
    await wb.notification('asks for an API key, and yours was not sent there').waitFor({ timeout: scaled(30_000) });
    assert.equal(other!.requests.length, 0, 'nothing reached the other origin with a key');

    // Remembered: Forget lists it as refused; forgetting it asks again, and Allow sends the key.
    await wb.runCommand('Agent Waypoints: Forget where the API key may go…');
    const row = wb.page.locator('.quick-input-list .monaco-list-row', { hasText: away }).first();
    await row.waitFor({ state: 'visible', timeout: scaled(30_000) });
    assert.match(await row.innerText(), /the key is not sent there/);
    await row.click();
    await wb.page.locator('.quick-input-widget input').press('Enter');
    await wb.waitForLog(/API key: forgot the answers for /);
    await checkUntilAsked(wb, entered!.url);
    await dialog(wb).getByRole('button', { name: 'Allow' }).click();
    await wb
      .notification(`Connected: \`${DEMO_MODEL_ID}\` at ${other!.url} answered`)
      .waitFor({ timeout: scaled(30_000) });
    assert.equal(other!.requests.at(-1)?.auth.key, KEY, 'allowed: the key went there');
  });
});
