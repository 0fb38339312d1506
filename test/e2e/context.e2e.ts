// Context management as a user meets it (issue 19): a long run against a model whose 16k-token
// window the scripted server enforces as OpenAI does. The header's context meter moves, a
// "condensed here" marker appears in the transcript and expands to the summary, and the run's
// totals read the same after a reload. Packaged VSIX, real workbench, scripted model over HTTP.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Frame } from 'playwright-core';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { effectLines, expectedEffects, longScenario, prepareWorkspace } from '../unit/context/longRun';
import { repoRoot, useWorkbench, waitUntil, scaled } from './harness';

const STEPS = 24;

describe('e2e: context management in the run view', () => {
  let server: ModelServer | undefined;
  const template = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-e2e-context-'));
  fs.cpSync(path.join(repoRoot, 'test/fixtures/workspace'), template, { recursive: true });
  prepareWorkspace(template);
  before(async () => {
    server = await startModelServer({
      scenario: gatedFirstStep(longScenario(STEPS)),
      contextWindow: 16_384,
      chunkDelayMs: 0,
    });
  });
  after(async () => server?.close());
  const workbench = useWorkbench(() => ({
    workspaceTemplate: template,
    settings: {
      'agentWaypoints.provider.baseUrl': server!.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      'agentWaypoints.approval.command': 'auto',
      'agentWaypoints.budget.maxSteps': 100,
    },
  }));

  const meter = (frame: Frame) => frame.locator('.run-header .context-meter').first().innerText();

  it('(m) the context meter moves, a "condensed here" marker expands to the summary, the totals survive a reload', async function () {
    this.timeout(scaled(420_000));
    const wb = workbench();
    await wb.startRun('Work through every step of the long task.');
    let frame = await wb.webviewFrame('main.transcript', 60_000);
    // Step 1's command waits for the gate: the meter shows the first request, whatever the machine's speed.
    await wb.waitForCommandRunning(/go\.txt/);
    await frame.locator('.run-header .context-meter').waitFor({ timeout: scaled(60_000) });
    const first = await meter(frame);
    assert.match(first, /^context: \d+% of 16k/);
    fs.writeFileSync(path.join(wb.workspace, 'go.txt'), '');
    // The transcript is long and drawn only where it is scrolled: the header says when the run is done.
    await frame.locator('.run-header .state-completed').waitFor({ timeout: scaled(300_000) });
    const last = await meter(frame);
    assert.notEqual(last, first, `the meter moved (${first} → ${last})`);
    assert.deepEqual(effectLines(wb.workspace), expectedEffects(STEPS), 'each effect once');
    assert.ok(
      server!.requests.some((q) => q.condense),
      'the run condensed',
    );
    assert.ok(
      server!.requests.every((q) => !q.overflow),
      'and never overflowed the window',
    );

    // The marker sits where the condense happened: scroll until it is drawn.
    const marker = frame.locator('details.condense').first();
    const scroller = frame.locator('main.transcript');
    await waitUntil('the "condensed here" marker to be drawn', async () => {
      if ((await marker.count()) > 0) return true;
      // Down through the transcript (the view may stand at its top or its end), wrapping at the end.
      await scroller.evaluate((el) => {
        if (el.scrollTop + el.clientHeight >= el.scrollHeight - 2) el.scrollTop = 0;
        else el.scrollBy(0, 400);
      });
      return false;
    });
    await marker.scrollIntoViewIfNeeded();
    assert.match(await marker.locator('summary').innerText(), /condensed here/i); // the heading is drawn in capitals
    await marker.locator('summary').click();
    const summary = marker.locator('.condense-body .text');
    await summary.waitFor({ state: 'visible' });
    assert.match(await summary.innerText(), /^Scripted summary: \d+ tool results condensed/);
    await wb.screenshot('e2e-m-condensed-here');

    const ledger = await frame.locator('.run-header .ledger').innerText();
    assert.match(ledger, /[\d,]+ tokens/);
    await wb.waitForRunViewSaved();
    await wb.reload();
    frame = await wb.webviewFrame('.run-header .ledger', 60_000);
    assert.equal(await frame.locator('.run-header .ledger').innerText(), ledger, 'the same totals after a reload');
    assert.equal(await meter(frame), last, 'and the same context meter');
    await wb.screenshot('e2e-m-after-reload');
  });
});

/** The first step's command waits for `go.txt` (the test writes it once it has read the meter). */
function gatedFirstStep(scenario: Scenario): Scenario {
  const [first, ...rest] = scenario.turns;
  const call = first!.reply!.tool_calls![0]!;
  const command = (call.arguments as { command: string }).command;
  const gate = `for i in $(seq 1 900); do [ -f go.txt ] && break; sleep 0.2; done; ${command}`;
  const gated = { ...first!, reply: { ...first!.reply!, tool_calls: [{ ...call, arguments: { command: gate } }] } };
  return { ...scenario, turns: [gated, ...rest] };
}
