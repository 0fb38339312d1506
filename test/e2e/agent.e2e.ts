// The three doors users meet — Start/Resume from the palette, the run view's approvals, the Runs tree —
// and the moments that matter: a reload with an approval pending, a crash in a tool batch.
// Everything real: the packaged VSIX in code-server, Chromium, the `openai` client over HTTP to
// the scripted model server, checkpoints on disk.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Frame } from 'playwright-core';
import { errorMessage } from '../../src/common/errors';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { waitUntil, type Workbench, scaled } from './harness';
import { scenarioOf, sharedWorkbench } from './shared';
import {
  ADD_A_TASK,
  COMMAND_POLICY_SETTINGS,
  commandPolicyBlock,
  installedVsixBlock,
  protectedFileBlock,
  TOUCH_FILES,
} from './sharedBlocks';

const reply = (content: string, calls: { name: string; arguments: Record<string, unknown> }[] = []) => ({
  reply: { content, ...(calls.length ? { tool_calls: calls } : {}) },
});

/** A scenario of the offline demo model: one main conversation, its turns in order. */
const scenario = (name: string, description: string, turns: Scenario['turns']): Scenario => ({
  name,
  description: `offline demo model: ${description}`,
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns,
});

/** One approval-gated side effect per run, countable on disk: `file` gets one line per execution. */
const appendTo = (file: string): Scenario['turns'] => [
  reply('(offline demo model) Recording the approval.', [
    { name: 'run_command', arguments: { command: `echo approved >> ${file}` } },
  ]),
  reply(`(offline demo model) Done: appended one line to ${file}.`),
];

/**
 * A two-call batch (the host can be killed, or a second window can try, in between): `echo one` into
 * `file`, then a slow call that sleeps `slowSeconds`, or — with `gate` — waits until the test creates
 * that file (at most 10 minutes, its own timeout above that), so a slow machine cannot make it end too
 * early: a second window that takes minutes to open still finds it running.
 */
function twoCommands(file: string, slow: { seconds: number } | { gate: string }): Scenario['turns'] {
  const second =
    'gate' in slow
      ? { command: `for i in $(seq 1 3000); do [ -f ${slow.gate} ] && break; sleep 0.2; done`, timeout_ms: 660_000 }
      : { command: `sleep ${slow.seconds}` };
  return [
    reply('(offline demo model) Two commands.', [
      { name: 'run_command', arguments: { command: `echo one >> ${file}` } },
      { name: 'run_command', arguments: second },
    ]),
    reply('(offline demo model) Both commands ran.'),
  ];
}

/** Command tools run without asking (the tests that crash or contend mid-command). */
const AUTO_COMMANDS = { 'agentWaypoints.approval.command': 'auto' };

/** The run view's frame once an approval card waits in it. */
async function approvalFrame(wb: Workbench): Promise<Frame> {
  return wb.webviewFrame('section.approval', 60_000);
}

/** A request as the run view's script sends it (for forged and replayed messages). */
const request = (id: number, method: string, params: unknown) => ({ type: 'request', id, method, params });

function lines(file: string): string[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

async function resumeFromPalette(wb: Workbench, title: string): Promise<void> {
  await wb.pickAfterCommand('Agent Waypoints: Resume agent session', title);
}

/** Two commands in one batch, both needing approval: one to reject, one to edit. */
const TWO_APPROVALS = scenario('e2e-two-approvals', 'two commands that need approval, then a final answer', [
  reply('(offline demo model) Two commands.', [
    { name: 'run_command', arguments: { command: 'echo first >> decisions.txt' } },
    { name: 'run_command', arguments: { command: 'echo second >> decisions.txt' } },
  ]),
  reply('(offline demo model) One ran as edited, one was rejected.'),
]);

/** An edit that needs approval (write tools ask by default). */
const EDIT_SCENARIO = scenario('e2e-edit', 'one edit to approve, then a final answer', [
  reply('(offline demo model) Greeting in French.', [
    { name: 'edit_file', arguments: { path: 'src/greet.js', old_text: 'Hello', new_text: 'Bonjour' } },
  ]),
  reply('(offline demo model) greet() now says Bonjour.'),
]);

/**
 * The blocks whose tests leave nothing the next needs pristine share one workbench (shared.ts): each
 * run's conversation is picked by its task, each writes a file of its own. The installed VSIX's block
 * (sharedBlocks.ts) comes first, before any run; the reload (b) comes after runs that all finished,
 * so what the window shows after it is (b)'s run alone; the command policy's run, left waiting, last.
 */
const shared = sharedWorkbench(
  scenarioOf('e2e-agent', [
    { task: 'Record the approval in effects.txt', turns: appendTo('effects.txt') },
    { task: 'Two commands to', turns: TWO_APPROVALS.turns },
    { task: 'Greet in French', turns: EDIT_SCENARIO.turns },
    { task: 'Approve me after a reload', turns: appendTo('reload.txt') },
    { task: 'Try to forge an approval', turns: appendTo('reload.txt') },
    TOUCH_FILES,
  ]),
  (model) => ({
    settings: {
      'agentWaypoints.provider.baseUrl': model.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      ...COMMAND_POLICY_SETTINGS,
    },
  }),
);

installedVsixBlock(shared);

describe('e2e: start, approve, browse, resume a finished run', () => {
  const workbench = shared.use();
  const model = shared.model;

  it('(a) palette → the run view’s approval card → Approve → effect on disk → run and checkpoints in the tree', async () => {
    const wb = workbench();
    await wb.startRun('Record the approval in effects.txt');
    const frame = await approvalFrame(wb);
    assert.match(await frame.locator('pre.command').first().innerText(), /echo approved >> effects\.txt/);
    // The codicons (tool icon, button icons) load under the panel's CSP: font-src = the webview's source.
    type Fonts = { document: { fonts: Iterable<{ family: string; status: string }> } };
    await frame.waitForFunction(
      () =>
        [...(globalThis as unknown as Fonts).document.fonts].some(
          (f) => f.family === 'codicon' && f.status === 'loaded',
        ),
      undefined,
      { timeout: scaled(15_000) },
    );
    await wb.screenshot('e2e-a-approval-in-run-view');
    assert.deepEqual(lines(path.join(wb.workspace, 'effects.txt')), [], 'nothing runs before the click');
    await wb.clickInWebview(frame, 'Approve', 'section.approval');
    await waitUntil('effects.txt', () => lines(path.join(wb.workspace, 'effects.txt')).length === 1);
    await wb.notification('completed').waitFor({ timeout: scaled(60_000) });

    await wb.openRunsView();
    const sidebar = wb.page.locator('#workbench\\.parts\\.sidebar');
    await sidebar.getByText('Finished', { exact: true }).click();
    await sidebar.getByText('Record the approval in effects.txt').click();
    const step = sidebar.locator('.monaco-list-row', {
      hasText: 'Step 1 · run_command echo approved >> effects.txt · approved',
    });
    await step.waitFor({ timeout: scaled(30_000) });
    await sidebar
      .locator('.monaco-list-row', { hasText: 'Step 2 · final answer' })
      .waitFor({ timeout: scaled(30_000) });
    await step.locator('.monaco-tl-twistie').click();
    await sidebar
      .getByText('post_tool_batch')
      .first()
      .waitFor({ timeout: scaled(30_000) });
    for (const phase of ['post_llm', 'pre_tool_batch'])
      assert.ok(await sidebar.getByText(phase).first().isVisible(), `${phase} checkpoint listed in its step`);
    await wb.screenshot('e2e-a-tree-with-checkpoints');
    assert.deepEqual(lines(path.join(wb.workspace, 'effects.txt')), ['approved']);
  });

  it('(e) Resume agent session on the finished run shows its result in the run view without calling the model', async () => {
    const wb = workbench();
    const before = model().stats().total;
    await resumeFromPalette(wb, 'Record the approval in effects.txt');
    const frame = await wb.webviewFrame('.msg.assistant.final', 30_000);
    assert.match(await frame.locator('.msg.assistant.final').innerText(), /Done: appended one line to effects\.txt/);
    await wb.screenshot('e2e-e-finished-run-result');
    assert.equal(model().stats().total, before, 'no LLM request');
    assert.deepEqual(lines(path.join(wb.workspace, 'effects.txt')), ['approved'], 'no tool ran');
  });
});

describe('e2e: the run view’s other decisions: reject with a reason, edited arguments, approve all', () => {
  const workbench = shared.use();
  const model = shared.model;

  it('(g) Reject… with a reason and Edit arguments… in the run view: only the edited command runs', async () => {
    const wb = workbench();
    const effects = path.join(wb.workspace, 'decisions.txt');
    const requestsBefore = model().stats().total;
    await wb.startRun('Two commands to decide');
    const frame = await approvalFrame(wb);
    await frame.locator('section.approval').nth(1).waitFor();
    assert.match(await frame.locator('vscode-button', { hasText: 'Approve all 2' }).innerText(), /Approve all 2/);

    // Reject the second with a reason.
    const second = frame.locator('section.approval', { hasText: 'echo second' });
    await second.locator('vscode-button', { hasText: 'Reject…' }).click();
    await second.locator('.reject vscode-textarea textarea').fill('not this one');
    await second.locator('vscode-button', { hasText: 'Reject with reason' }).click();
    await frame
      .locator('section.approval', { hasText: 'echo second' })
      .waitFor({ state: 'detached', timeout: scaled(15_000) });

    await frame
      .locator('.detail', { hasText: '1 tool call waiting for approval.' })
      .waitFor({ timeout: scaled(15_000) });

    // Edit the first, then approve the edited call.
    const first = frame.locator('section.approval', { hasText: 'echo first' });
    await first.locator('vscode-button', { hasText: 'Edit arguments…' }).click();
    await first
      .locator('.edit vscode-textarea textarea')
      .fill(JSON.stringify({ command: 'echo edited >> decisions.txt' }));
    await wb.screenshot('e2e-g-edit-arguments');
    await first.locator('vscode-button', { hasText: 'Approve edited' }).click();

    await wb.notification('“Two commands to decide” completed').waitFor({ timeout: scaled(60_000) });
    assert.deepEqual(
      lines(effects),
      ['edited'],
      'the edited command ran once; the original and the rejected one never',
    );
    assert.equal(model().stats().total - requestsBefore, 2, 'one request per turn');
  });

  it('(h) Approve all: every waiting call of the batch runs, each once', async () => {
    const wb = workbench();
    const effects = path.join(wb.workspace, 'decisions.txt');
    await wb.startRun('Two commands to approve at once');
    const frame = await approvalFrame(wb);
    await frame.locator('section.approval').nth(1).waitFor();
    await frame.locator('vscode-button', { hasText: 'Approve all 2' }).click();
    await waitUntil('both commands', () => lines(effects).length === 3);
    await wb.notification('“Two commands to approve at once” completed').waitFor({ timeout: scaled(60_000) });
    assert.deepEqual(lines(effects), ['edited', 'first', 'second'], 'both ran, in order, once');
  });
});

describe('e2e: reviewing an edit before approving it', () => {
  const workbench = shared.use();

  it('(i) Show diff opens VS Code’s diff editor on the proposed change; the file changes only after Approve', async () => {
    const wb = workbench();
    const file = path.join(wb.workspace, 'src/greet.js');
    const original = fs.readFileSync(file, 'utf8');
    await wb.startRun('Greet in French');
    const frame = await approvalFrame(wb);
    // The card's diff is coloured by the highlighter's own script, loaded by the view under its CSP.
    await frame
      .locator('pre.diff code.hljs .hljs-addition', { hasText: 'Bonjour' })
      .waitFor({ timeout: scaled(30_000) });
    await frame.locator('vscode-button', { hasText: 'Show diff' }).click();
    const diff = wb.page.locator('.monaco-diff-editor').first();
    await diff.waitFor({ timeout: scaled(30_000) });
    // Side by side when the group is wide enough, inline (both lines in one editor) when it is not.
    // Both sides come from the extension host (the proposal through a content provider): slow on a loaded machine.
    await wb.page
      .locator('.monaco-diff-editor .view-line')
      .filter({ hasText: 'Bonjour', visible: true })
      .first()
      .waitFor({ timeout: scaled(60_000) });
    await wb.page
      .locator('.monaco-diff-editor .view-line')
      .filter({ hasText: 'Hello' })
      .first()
      .waitFor({ state: 'attached', timeout: scaled(60_000) });
    await wb.page
      .locator('.tab', { hasText: 'proposed by edit_file' })
      .first()
      .waitFor({ timeout: scaled(15_000) });
    await wb.screenshot('e2e-i-show-diff');
    assert.equal(fs.readFileSync(file, 'utf8'), original, 'showing the diff changed nothing');

    const panel = await approvalFrame(wb);
    await wb.clickInWebview(panel, 'Approve', 'section.approval');
    await wb.notification('“Greet in French” completed').waitFor({ timeout: scaled(60_000) });
    assert.equal(fs.readFileSync(file, 'utf8'), original.replace('Hello', 'Bonjour'));
  });
});

describe('e2e: a reload while an approval waits; forged webview messages', () => {
  const workbench = shared.use();

  it('(b) reload with an approval pending → the approval is shown again → Approve → the run completes', async () => {
    const wb = workbench();
    await wb.startRun('Approve me after a reload');
    await approvalFrame(wb);
    // A person does not reload within a second. VS Code in the browser saves the open editors' state
    // when idle, at most every 5 s (BROWSER_DEFAULT_FLUSH_INTERVAL); a reload sooner can lose it.
    await wb.waitForRunViewSaved();
    await wb.reload();
    // The activation announces the waiting approval…
    await wb.notification('waiting for your approval').waitFor({ timeout: scaled(60_000) });
    await wb.screenshot('e2e-b-after-reload-notification');
    // …and the run view comes back by itself: the workbench restores it through our serializer, which
    // reads its content from the store (the webview kept only ids and its scroll position).
    const frame = await wb.webviewFrame('section.approval', 30_000);
    const extLogs = fs
      .readdirSync(wb.userDataDir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('Agent Waypoints.log'))
      .map((f) => fs.readFileSync(path.join(wb.userDataDir, f), 'utf8'));
    assert.ok(
      extLogs.some((l) => /run view of run \S+ restored after a reload/.test(l)),
      'restored by the serializer',
    );
    assert.match(await frame.locator('pre.command').first().innerText(), /echo approved/);
    await wb.screenshot('e2e-b-approval-after-reload');
    await wb.clickInWebview(frame, 'Approve', 'section.approval');
    await wb.notification('completed').waitFor({ timeout: scaled(60_000) });
    assert.deepEqual(lines(path.join(wb.workspace, 'reload.txt')), ['approved']);
  });

  it('(d) malformed, forged, stale and replayed messages from the webview are rejected; nothing executes', async () => {
    const wb = workbench();
    await wb.startRun('Try to forge an approval');
    const frame = await approvalFrame(wb);
    const card = frame.locator('section.approval').first();
    const toolCallId = (await card.getAttribute('data-tool-call-id'))!;
    const forged: unknown[] = [
      null,
      'approve',
      42,
      { type: 'approve', requestId: 1, runId: 'r', toolCallId, inputHash: 'a'.repeat(64) }, // the old panel's shape
      request(1, 'launchMissiles', { runId: 'x' }),
      request(2, 'approve', { runId: 'not-this-run', toolCallId, inputHash: 'a'.repeat(64) }),
      request(3, 'approve', { runId: '../../etc', toolCallId, inputHash: 'a'.repeat(64), extra: true }),
      request(4, 'approveAll', { runId: 'r', items: [] }),
      request(5, 'approveEdited', { runId: 'r', toolCallId, inputHash: 'zz', argumentsJson: '{}' }),
    ];
    // Each refused message is logged once: waiting for the log lines is waiting for the host to have handled them all.
    const refusals = /rejected webview message|refused:/;
    const refusedBefore = wb.countLog(refusals);
    for (const m of forged) await wb.postFromWebview(frame, m);
    // Well-formed but stale: the right run and call, the wrong input hash (arguments "changed").
    const state = await readPanelIds(frame);
    await wb.postFromWebview(
      frame,
      request(6, 'approve', { runId: state.runId, toolCallId, inputHash: 'b'.repeat(64) }),
    );
    await wb.waitForLog(refusals, refusedBefore + forged.length + 1);
    assert.deepEqual(
      lines(path.join(wb.workspace, 'reload.txt')),
      ['approved'],
      'only (b)’s approved execution exists',
    );
    assert.ok(await card.isVisible(), 'the approval is still pending');
    await wb.runCommand('Agent Waypoints: Show log');
    await wb.page
      .locator('#workbench\\.parts\\.panel')
      .getByText('approve refused', { exact: false })
      .first()
      .waitFor({ timeout: scaled(15_000) });

    await wb.runCommand('Agent Waypoints: Show log');
    const panel = wb.page.locator('#workbench\\.parts\\.panel');
    await panel
      .getByText('rejected webview message', { exact: false })
      .first()
      .waitFor({ timeout: scaled(15_000) });
    await wb.screenshot('e2e-d-rejected-messages-log');

    // The real click still works; replaying the same decision afterwards is rejected.
    await wb.clickInWebview(frame, 'Approve', 'section.approval');
    await waitUntil('the approved execution', () => lines(path.join(wb.workspace, 'reload.txt')).length === 2);
    const refusedBeforeReplay = wb.countLog(refusals);
    await wb.postFromWebview(
      frame,
      request(7, 'approve', { runId: state.runId, toolCallId, inputHash: state.inputHash }),
    );
    await wb.waitForLog(refusals, refusedBeforeReplay + 1);
    await wb.notification('completed').waitFor({ timeout: scaled(60_000) });
    assert.deepEqual(
      lines(path.join(wb.workspace, 'reload.txt')),
      ['approved', 'approved'],
      'the replayed decision executed nothing',
    );
  });
});

commandPolicyBlock(shared);

/** The run id and input hash the panel shows for its first approval (data attributes of the card). */
async function readPanelIds(frame: Frame): Promise<{ runId: string; inputHash: string }> {
  return frame.evaluate(() => {
    const g = globalThis as unknown as {
      document: { querySelector(s: string): { getAttribute(a: string): string | null } | null };
    };
    const card = g.document.querySelector('section.approval');
    return { runId: card?.getAttribute('data-run-id') ?? '', inputHash: card?.getAttribute('data-input-hash') ?? '' };
  });
}

/**
 * The crash (c) and the second window (f) share one workbench where commands and writes run without
 * asking: (c)'s run ends finished, so the second window finds only (f)'s run held; the protected
 * file's block (sharedBlocks.ts) comes last, its run left waiting.
 */
const unasked = sharedWorkbench(
  scenarioOf('e2e-agent-auto', [
    { task: 'Two commands, one slow', turns: twoCommands('effects.txt', { seconds: 8 }) },
    // The slow command is long enough for a second window to open and try to take the run.
    { task: 'Held by the first window', turns: twoCommands('held.txt', { gate: 'release.txt' }) },
    ADD_A_TASK,
  ]),
  (model) => ({
    settings: {
      'agentWaypoints.provider.baseUrl': model.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      ...AUTO_COMMANDS,
      'agentWaypoints.approval.write': 'auto',
    },
  }),
);

describe('e2e: SIGKILL of the extension host during a tool batch, then reopen', () => {
  const workbench = unasked.use();

  it('(c) interrupted notification → Resume agent session → the run completes, each side effect once', async () => {
    const wb = workbench();
    const effects = path.join(wb.workspace, 'effects.txt');
    await wb.startRun('Two commands, one slow');
    // While `sleep 8` runs, its intent is durable and its result is not: crash then.
    await wb.waitForCommandRunning(/sleep 8/);
    assert.deepEqual(lines(effects), ['one'], 'the first command ran before the second started');
    await wb.crashAndReopen();
    await wb.notification('interrupted').waitFor({ timeout: scaled(60_000) });
    await wb.screenshot('e2e-c-interrupted-notification');

    await resumeFromPalette(wb, 'Two commands, one slow');
    // `echo one` is replayed from the journal; `sleep 8` may have been running: the user decides.
    const frame = await approvalFrame(wb);
    await frame.locator('.warning', { hasText: 'May already have run' }).waitFor();
    await wb.screenshot('e2e-c-uncertain-approval');
    await wb.clickInWebview(frame, 'Approve', 'section.approval');
    await wb.notification('completed').waitFor({ timeout: scaled(90_000) });
    assert.deepEqual(lines(effects), ['one'], 'the finished side effect was not run again');
  });
});

describe('e2e: two windows on one workspace', () => {
  const workbench = unasked.use();

  it('(f) a second window cannot take a run the first is running: it names the holder and opens the run read-only', async () => {
    const wb = workbench();
    const effects = path.join(wb.workspace, 'held.txt');
    await wb.startRun('Held by the first window');
    await waitUntil('the first command', () => lines(effects).length === 1);
    const second = await wb.openAnotherWindow(); // its own extension host, the same storage
    try {
      await resumeFromPalette(second, 'Held by the first window');
      // A warning's toast goes away 12 s after it shows unless the pointer is on it: on a loaded machine the
      // checks and the screenshot below took longer, and the click found no button (held, as a reader would).
      const toast = await second.heldNotification('is held by');
      assert.match(
        await toast.innerText(),
        /“Held by the first window” is held by VS Code window .*\(pid \d+ on .*read-only/s,
      );
      await second.settledNotification('is held by');
      await second.screenshot('e2e-f-second-window-held');
      await second.clickNotificationButton('is held by', 'Open latest checkpoint (read-only)');
      await second.page
        .locator('.monaco-editor', { hasText: '"run_id"' })
        .first()
        .waitFor({ timeout: scaled(30_000) })
        .catch(async (err: unknown) => {
          // What the second window shows instead (a document saying why it could not read the
          // checkpoint, another toast, nothing), for the report: the failure's own screenshot is the first window's.
          await second.screenshot('failed-e2e-f-second-window');
          const shown = await second.page
            .locator('.editor-container .view-lines, .notifications-toasts')
            .allInnerTexts()
            .catch(() => []);
          throw new Error(`${errorMessage(err)}\nthe second window shows: ${JSON.stringify(shown).slice(0, 2000)}`);
        });

      fs.writeFileSync(path.join(wb.workspace, 'release.txt'), ''); // the first window's slow command may end now
      await wb.notification('completed').waitFor({ timeout: scaled(90_000) });
      assert.deepEqual(lines(effects), ['one'], 'the first window ran it, once; the second ran nothing');
      // The second window catches up with the first's progress from the shared storage.
      await second.runCommand('Agent Waypoints: Refresh runs');
      await second.openRunsView();
      const sidebar = second.page.locator('#workbench\\.parts\\.sidebar');
      await sidebar.getByText('Finished', { exact: true }).click();
      await sidebar
        .getByText('Held by the first window')
        .first()
        .waitFor({ timeout: scaled(15_000) });
      await second.screenshot('e2e-f-second-window-caught-up');
    } finally {
      await second.close();
    }
  });
});

protectedFileBlock(unasked);
