// VS Code's own language models and Check model connection, clicked through in the real workbench:
// the packaged VSIX plus a test extension that contributes a LanguageModelChatProvider backed by the
// scripted server. The endpoint in settings is unreachable on purpose: only vscode.lm can answer.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CHECK_TOOL_NAME } from '../../src/runner/provider/check';
import type { ScenarioInput } from '../fixtures/modelServer/scenario';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { lmExtensionVsix } from '../support/lmExtension';
import { useWorkbench, scaled } from './harness';

const UNREACHABLE = 'http://127.0.0.1:9/v1';
const SCENARIO: ScenarioInput = {
  name: 'e2e-vscode-lm',
  description: 'offline demo model behind a VS Code language model: one write that needs approval, then an answer',
  model: 'waypoints-test-model',
  turns: [
    {
      reply: {
        content: '(offline demo model) Writing the note.',
        tool_calls: [{ name: 'write_file', arguments: { path: 'notes/lm.md', content: 'via vscode.lm\n' } }],
      },
    },
    { reply: { content: '(offline demo model) Wrote notes/lm.md.' } },
  ],
  subconversations: [
    {
      id: 'check',
      user_contains: 'Agent Waypoints connection check',
      turns: [{ reply: { tool_calls: [{ name: CHECK_TOOL_NAME, arguments: { ok: true } }] } }],
    },
  ],
};

describe('e2e: VS Code language models and Check model connection', () => {
  let server: ModelServer | undefined;
  let vsix = '';
  before(async function () {
    this.timeout(scaled(120_000));
    server = await startModelServer({ scenario: SCENARIO });
    vsix = await lmExtensionVsix();
  });
  after(async () => server?.close());
  const workbench = useWorkbench(() => ({
    extraVsix: [vsix],
    settings: {
      'waypointsTestLm.baseUrl': server!.url,
      'agentWaypoints.provider.baseUrl': UNREACHABLE,
      'agentWaypoints.provider.model': 'gpt-4.1-mini',
      'agentWaypoints.provider.maxRetries': 0,
    },
  }));

  it('(j) the welcome view links Check model connection; it says the base URL cannot be reached', async () => {
    const wb = workbench();
    await wb.openRunsView();
    const link = wb.page.locator('#workbench\\.parts\\.sidebar').getByText('Check model connection', { exact: true });
    await link.waitFor({ timeout: scaled(60_000) });
    await wb.screenshot('e2e-j-welcome-view');
    await link.click();
    await wb.notification(`Cannot reach ${UNREACHABLE}`).waitFor({ timeout: scaled(30_000) });
    await wb.screenshot('e2e-j-check-unreachable');
  });

  it('(k) Start agent run offers the VS Code model; its approval survives a reload; the run completes with one request per response', async () => {
    const wb = workbench();
    await wb.startRun('Write a note through the VS Code model');
    const lmRow = wb.page
      .locator('.quick-input-list .monaco-list-row', { hasText: 'Waypoints test model (scripted)' })
      .first();
    await lmRow.waitFor({ state: 'visible', timeout: scaled(30_000) });
    assert.ok(
      await wb.page.locator('.quick-input-list .monaco-list-row', { hasText: 'gpt-4.1-mini' }).first().isVisible(),
      'the endpoint model is offered beside it',
    );
    await wb.screenshot('e2e-k-model-picker');
    await lmRow.click();

    await wb.webviewFrame('section.approval', 60_000);
    assert.deepEqual(server!.stats().per_turn, { 'main#0': 1 });
    await wb.waitForRunViewSaved(); // reload once the browser has saved the open editors
    await wb.reload();
    const frame = await wb.webviewFrame('section.approval', 60_000);
    await wb.screenshot('e2e-k-approval-after-reload');
    assert.equal(fs.existsSync(path.join(wb.workspace, 'notes/lm.md')), false, 'nothing written before the decision');
    await wb.clickInWebview(frame, 'Approve', 'section.approval');
    await wb.notification('completed').waitFor({ timeout: scaled(60_000) });
    assert.equal(fs.readFileSync(path.join(wb.workspace, 'notes/lm.md'), 'utf8'), 'via vscode.lm\n');
    assert.deepEqual(
      server!.stats().per_turn,
      { 'main#0': 1, 'main#1': 1 },
      'the durable response was not requested again after the reload',
    );
    await wb.screenshot('e2e-k-completed');
  });
});
