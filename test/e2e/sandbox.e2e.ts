// "Auto in sandbox" in the real workbench: the packaged VSIX in code-server, the real bubblewrap,
// the scripted model over HTTP. A test command runs without a click; the header says the mode; a
// command that wants a domain shows the card ("… wanted 127.0.0.1") before the model sees the
// result; Allow for this run runs that one command once more, with the domain; a restore takes
// back what the sandboxed commands wrote.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { useWorkbench, waitUntil, type Workbench } from './harness';

const command = (text: string, cmd: string) => ({
  reply: {
    content: `(offline demo model) ${text}`,
    tool_calls: [{ name: 'run_command', arguments: { command: cmd } }],
  },
});

function scenario(port: number): Scenario {
  return {
    name: 'e2e-sandbox',
    description: 'offline demo model: a test command, then one that wants a local domain',
    model: DEMO_MODEL_ID,
    subconversations: [],
    turns: [
      command('Running the tests.', 'echo "1 passing" > tested.txt && cat tested.txt'),
      command('Fetching.', `echo try >> tries.txt; curl -sS -p -m 5 http://127.0.0.1:${port}/ > got.txt`),
      { reply: { content: '(offline demo model) Tested and fetched.' } },
    ],
  };
}

// One read, not exists-then-read: the restore below deletes these files while the test polls them.
const read = (wb: Workbench, rel: string) => {
  try {
    return fs.readFileSync(path.join(wb.workspace, rel), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
};

describe('e2e: auto in sandbox', () => {
  let model: ModelServer | undefined;
  let web: http.Server | undefined;
  let hits = 0;
  before(async () => {
    web = http.createServer((_q, s) => (hits++, s.end('reached\n')));
    await new Promise<void>((r) => web!.listen(0, '127.0.0.1', r));
    model = await startModelServer({ scenario: scenario((web.address() as AddressInfo).port) });
  });
  after(async () => {
    await model?.close();
    web?.close();
  });
  const workbench = useWorkbench(() => ({
    settings: {
      'agentWaypoints.provider.baseUrl': model!.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      'agentWaypoints.approval.command': 'sandbox',
      'agentWaypoints.sandbox.allowedDomains': ['registry.npmjs.org', 'example.com'],
    },
  }));

  it('a test command runs unasked; a blocked domain shows the card; Allow for this run retries it once; restore takes it back', async () => {
    const wb = workbench();
    await wb.startRun('Test and fetch');

    const frame = await wb.webviewFrame('section.approval', 90_000);
    assert.equal(read(wb, 'tested.txt'), '1 passing\n', 'the test command ran without a click');
    assert.equal(await frame.locator('section.approval').count(), 1, 'only the blocked command waits');
    const card = frame.locator('section.approval');
    assert.match(await card.locator('.wanted').innerText(), /echo try >> tries\.txt[\s\S]*wanted 127\.0\.0\.1/);
    assert.equal((await card.locator('summary .state').innerText()).trim(), 'waiting for approval');
    assert.equal(read(wb, 'tries.txt'), 'try\n');
    assert.equal(hits, 0, 'the sandbox let nothing through');
    const header = frame.locator('.approval-mode');
    assert.equal((await header.innerText()).trim(), 'commands: auto in sandbox · network: 2 domains');
    const tested = frame.locator('section.tool', { hasText: 'tested.txt' }).first();
    assert.match(
      (await tested.locator('.sandbox').textContent()) ?? '',
      /Ran in the sandbox: workspace writable · network: example\.com, registry\.npmjs\.org · /,
    );
    assert.deepEqual(await tested.locator('.changed-files li').allTextContents(), ['tested.txt']);
    await card.scrollIntoViewIfNeeded();
    await wb.screenshot('e2e-sandbox-blocked-card');

    await wb.clickInWebview(frame, 'Allow for this run', 'section.approval');
    await waitUntil('the retry', () => read(wb, 'got.txt') === 'reached\n');
    await wb.notification('completed').waitFor({ timeout: 60_000 });
    assert.equal(read(wb, 'tries.txt'), 'try\ntry\n', 'that one command ran exactly once more');
    assert.equal(hits, 1);
    await frame.locator('.msg.assistant.final').waitFor({ timeout: 30_000 });
    await wb.screenshot('e2e-sandbox-after-retry');

    // Restore files to step 1: what both sandboxed commands wrote goes, every attempt of the retried one.
    await frame.locator('.waypoint[data-step="1"] button.restore-here').click();
    const row = (text: string) =>
      wb.page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: text }).first();
    await row('Restore files').click();
    await row('tries.txt').waitFor({ timeout: 30_000 });
    await wb.page.locator('.quick-input-widget input').press('Enter');
    await waitUntil(
      'the restored files',
      () => read(wb, 'tested.txt') === null && read(wb, 'tries.txt') === null && read(wb, 'got.txt') === null,
    );
  });
});
