// The run view as a user meets it: text streams in before the model's response ends, approvals in
// place, the final answer, a follow-up turn (a new run in the same thread, the model shown the
// earlier conversation), a reload mid-stream, a crash mid-tool with Resume in the view, and the
// view in light, dark and high-contrast themes. Packaged VSIX, real workbench, scripted model over HTTP.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Frame } from 'playwright-core';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { repoRoot, setColorTheme, useWorkbench, type Workbench, scaled } from './harness';
import { scenarioOf, sharedWorkbench } from './shared';

const LONG = 'I will look at the project first. '.repeat(6).trim();
/**
 * The first answer's stream stops before this chunk until the test has seen its first words in the
 * view: the view is surely open while it streams, however slow the machine, and no longer than that.
 */
const HOLD_AT_CHUNK = 8;
const scenario = (name: string, turns: Scenario['turns']): Scenario => ({
  name,
  description: `offline demo model: ${name}`,
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns,
});

const CONVERSATION = scenario('e2e-run-view', [
  {
    reply: {
      content: `(offline demo model) ${LONG}`,
      tool_calls: [{ name: 'run_command', arguments: { command: 'echo approved >> effects.txt' } }],
    },
  },
  { reply: { content: '(offline demo model) Done: **one line** appended to `effects.txt`.' } },
  { reply: { content: '(offline demo model) Follow-up answered: the file has one line.' } },
]);

function scripted(
  played: Scenario,
  settings: Record<string, unknown> = {},
  beforeChunk?: (index: number) => Promise<void> | void,
): { workbench: () => Workbench; model: () => ModelServer } {
  let server: ModelServer | undefined;
  before(async () => (server = await startModelServer({ scenario: played, ...(beforeChunk ? { beforeChunk } : {}) })));
  after(async () => server?.close());
  const model = () => server!;
  const workbench = useWorkbench(() => ({
    settings: {
      'agentWaypoints.provider.baseUrl': model().url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      ...settings,
    },
  }));
  return { workbench, model };
}

const lines = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

async function userTexts(frame: Frame): Promise<string[]> {
  return frame.locator('.msg.user .text').allInnerTexts();
}

describe('e2e: the run view', () => {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  after(() => release()); // a failed test leaves no reply waiting
  const { workbench, model } = scripted(CONVERSATION, {}, (i) => (i === HOLD_AT_CHUNK ? held : undefined));

  it('(j) streams text before the response ends → approve in place → final answer → a follow-up turn in the same thread', async function () {
    this.timeout(scaled(360_000)); // two model turns and a follow-up on a busy 2-core machine
    const wb = workbench();
    await wb.startRun('Record one line in effects.txt');
    const frame = await wb.webviewFrame('main.transcript', 60_000);
    // Part of the answer is on screen while the server is still writing the response.
    await frame
      .locator('.msg.assistant.streaming', { hasText: 'I will look at the project' })
      .waitFor({ timeout: scaled(30_000) });
    const first = model().requests[0]!;
    assert.equal(first.finished, false, 'the text was visible before the response ended');
    await wb.screenshot('e2e-j-streaming');
    release();

    const card = frame.locator('section.approval', { hasText: 'echo approved' });
    await card.waitFor({ timeout: scaled(30_000) });
    assert.deepEqual(lines(path.join(wb.workspace, 'effects.txt')), [], 'nothing runs before the click');
    await card.locator('vscode-button', { hasText: 'Approve' }).first().click();
    const final = frame.locator('.msg.assistant.final', { hasText: 'one line' });
    await final.waitFor({ timeout: scaled(60_000) });
    assert.deepEqual(lines(path.join(wb.workspace, 'effects.txt')), ['approved']);
    assert.equal(await final.locator('strong').innerText(), 'one line', 'Markdown rendered');

    await frame.locator('footer.composer vscode-textarea textarea').fill('How many lines does the file have now?');
    await frame.locator('footer.composer vscode-button', { hasText: 'Send' }).click();
    await frame.locator('.turn', { hasText: 'Turn 2' }).waitFor({ timeout: scaled(30_000) });
    await frame.locator('.msg.assistant.final', { hasText: 'Follow-up answered' }).waitFor({ timeout: scaled(60_000) });
    const followUp = model().requests.at(-1)!;
    assert.deepEqual(
      followUp.messages.filter((m) => m.role === 'user').map((m) => m.content),
      ['Record one line in effects.txt', 'How many lines does the file have now?'],
      'the follow-up request carries the earlier conversation',
    );
    assert.ok(
      followUp.messages.some((m) => m.role === 'assistant' && /one line\*\* appended/.test(m.content ?? '')),
      'and the earlier answer',
    );
    assert.deepEqual(lines(path.join(wb.workspace, 'effects.txt')), ['approved'], 'the follow-up ran nothing again');
    assert.equal(
      await frame.locator('.run-header .meta', { hasText: '2 turns' }).count(),
      1,
      'one view shows the whole thread',
    );
  });

  it('(j2) the run view in light, dark and high-contrast themes', async () => {
    const wb = workbench(); // the thread (j) left open
    await wb.webviewFrame('.msg.assistant.final', 60_000);
    for (const [theme, cls, name] of [
      ['Default Light Modern', 'vs', 'light'],
      ['Default Dark Modern', 'vs-dark', 'dark'],
      ['Default High Contrast', 'hc-black', 'high-contrast'],
    ] as const) {
      await setColorTheme(wb, theme, cls);
      await wb.screenshot(`e2e-j-run-view-${name}`);
    }
    await setColorTheme(wb, 'Default Light Modern', 'vs');
    const box = await wb.page.locator('#workbench\\.parts\\.editor').boundingBox();
    fs.mkdirSync(path.join(repoRoot, 'test-results'), { recursive: true });
    if (box) await wb.page.screenshot({ path: path.join(repoRoot, 'test-results', 'readme-run-view.png'), clip: box });
  });

  it('(j3) the Runs tree shows the conversation as one node of two turns, each run’s steps labelled; clicking a step opens the run view there', async () => {
    const wb = workbench();
    await wb.runCommand('View: Close All Editors');
    await wb.openRunsView();
    const sidebar = wb.page.locator('#workbench\\.parts\\.sidebar');
    const row = (text: string) => sidebar.locator('.monaco-list-row', { hasText: text }).first();
    const expand = async (text: string) => {
      const r = row(text);
      await r.waitFor({ timeout: scaled(30_000) });
      if ((await r.getAttribute('aria-expanded')) === 'false') await r.locator('.monaco-tl-twistie').click();
    };
    // Wide enough that the labels read in full in the screenshot: drag the side bar's edge.
    const bar = (await sidebar.boundingBox())!;
    await wb.page.mouse.move(bar.x + bar.width + 1, bar.y + bar.height / 2);
    await wb.page.mouse.down();
    await wb.page.mouse.move(bar.x + bar.width + 260, bar.y + bar.height / 2, { steps: 5 });
    await wb.page.mouse.up();
    await expand('Finished');
    const thread = row('2 turns');
    await thread.waitFor({ timeout: scaled(30_000) });
    assert.match(await thread.innerText(), /Record one line in effects\.txt[\s\S]*2 turns · completed/);
    await expand('2 turns');
    await expand('Turn 1 · Record one line in effects.txt');
    await expand('Turn 2 · How many lines does the file have now?');
    const step = row('Step 1 · run_command echo approved >> effects.txt · approved');
    await step.waitFor({ timeout: scaled(30_000) });
    await row('Step 1 · final answer').waitFor({ timeout: scaled(30_000) });
    assert.equal(
      await sidebar.locator('.monaco-list-row .label-name', { hasText: /^Start$/ }).count(),
      2,
      'each turn starts with its Start step',
    );
    await expand('Step 1 · run_command echo approved >> effects.txt · approved');
    for (const phase of ['post_llm', 'pre_tool_batch', 'post_tool_batch'])
      await row(phase).waitFor({ timeout: scaled(10_000) });
    const file = await wb.screenshot('e2e-j3-runs-tree-thread-steps');
    assert.ok(fs.statSync(file).size > 10_000, 'a screenshot of the tree');

    // A click on the step's label (not its twistie) runs its command: the run view opens at that step.
    await step.locator('.label-name').click();
    const frame = await wb.webviewFrame('main.transcript', 30_000);
    const waypoint = frame.locator('.waypoint[data-step="1"]', { hasText: 'run_command echo approved >> effects.txt' });
    await waypoint.waitFor({ state: 'visible', timeout: scaled(30_000) });
    await wb.screenshot('e2e-j3-step-opens-run-view');
  });
});

const SLOW = scenario('e2e-reload-stream', [
  // ≈ 90 s of streaming, so the reload surely lands mid-stream on a loaded machine; the request after Resume streams at full speed.
  {
    chunk_delay_ms: 150,
    slow_times: 1,
    reply: { content: `(offline demo model) ${'Streaming slowly, word by word. '.repeat(100)}` },
  },
  { reply: { content: '(offline demo model) Answered after the reload.' } },
]);
const CRASH = scenario('e2e-crash-view', [
  {
    reply: {
      content: '(offline demo model) Two commands.',
      tool_calls: [
        { name: 'run_command', arguments: { command: 'echo one >> effects.txt' } },
        { name: 'run_command', arguments: { command: 'sleep 8' } },
      ],
    },
  },
  { reply: { content: '(offline demo model) Both commands ran.' } },
]);

/**
 * The reload and the crash share one workbench (shared.ts): each test's run ends finished, so what the
 * window shows after the next reload or crash is that test's run alone.
 */
const recovery = sharedWorkbench(
  scenarioOf('e2e-run-view-recovery', [
    { task: 'Stream slowly', turns: SLOW.turns },
    { task: 'Crash in the middle', turns: CRASH.turns },
  ]),
  (model) => ({
    settings: {
      'agentWaypoints.provider.baseUrl': model.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      'agentWaypoints.approval.command': 'auto',
    },
  }),
);

describe('e2e: the run view across a reload mid-stream', () => {
  const workbench = recovery.use();

  it('(k) a reload while text streams restores the view with the same transcript; its Resume finishes the run', async () => {
    const wb = workbench();
    await wb.startRun('Stream slowly');
    let frame = await wb.webviewFrame('.msg.assistant.streaming', 60_000);
    // Opened after the stream began, the view still starts from the answer's first words.
    await frame
      .locator('.msg.assistant.streaming', { hasText: '(offline demo model) Streaming slowly' })
      .waitFor({ timeout: scaled(15_000) });
    // The task is drawn before the answer streams; capture once both are on screen.
    await frame.locator('main.transcript .msg.user', { hasText: 'Stream slowly' }).waitFor({ timeout: scaled(15_000) });
    const before = { users: await userTexts(frame), waypoints: await frame.locator('.waypoint .step').allInnerTexts() };
    // VS Code in the browser saves the open editors' state when idle (at most every 5 s): reload once it has.
    await wb.waitForRunViewSaved();
    await wb.reload();
    frame = await wb.webviewFrame('main.transcript .msg.user', 60_000);
    assert.deepEqual(await userTexts(frame), before.users, 'the same conversation');
    // The step's queued checkpoints may have been written when the old window closed: nothing is lost, one may be added.
    const after = await frame.locator('.waypoint .step').allInnerTexts();
    assert.ok(
      before.waypoints.every((w) => after.includes(w)),
      `the same waypoints (before ${JSON.stringify(before.waypoints)}, after ${JSON.stringify(after)})`,
    );
    const status = frame.locator('.status', { hasText: 'interrupted' });
    await status.waitFor({ timeout: scaled(30_000) });
    await wb.screenshot('e2e-k-after-reload');
    await status.locator('vscode-button', { hasText: 'Resume' }).click();
    await frame.locator('.msg.assistant.final', { hasText: 'Streaming slowly' }).waitFor({ timeout: scaled(60_000) });
  });
});

describe('e2e: the run view after a crash mid-tool', () => {
  const workbench = recovery.use();

  it('(l) SIGKILL of the extension host mid-tool → the view shows interrupted → its Resume completes the run, each effect once', async () => {
    const wb = workbench();
    const effects = path.join(wb.workspace, 'effects.txt');
    await wb.startRun('Crash in the middle');
    // While `sleep 8` runs, its intent is durable and its result is not: crash then.
    await wb.waitForCommandRunning(/sleep 8/);
    assert.deepEqual(lines(effects), ['one'], 'the first command ran before the second started');
    await wb.crashAndReopen();
    await wb.heldNotification('interrupted', 60_000);
    await wb.clickNotificationButton('interrupted', 'Show');
    const frame = await wb.webviewFrame('.status.state-interrupted', 30_000);
    await wb.screenshot('e2e-l-interrupted-in-view');
    await frame.locator('.status vscode-button', { hasText: 'Resume' }).click();
    // `echo one` replays from the journal; `sleep 8` may have been running: the user decides, in place.
    const card = frame.locator('section.approval', { hasText: 'sleep 8' });
    await card.locator('.warning', { hasText: 'May already have run' }).waitFor({ timeout: scaled(30_000) });
    await card.locator('vscode-button', { hasText: 'Approve' }).first().click();
    await frame.locator('.msg.assistant.final', { hasText: 'Both commands ran' }).waitFor({ timeout: scaled(90_000) });
    assert.deepEqual(lines(effects), ['one'], 'the finished side effect was not run again');
    await frame
      .locator('section.tool', { hasText: 'echo one' })
      .locator('.badge', { hasText: 'replayed' })
      .waitFor({ timeout: scaled(15_000) });
  });
});
