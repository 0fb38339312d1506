// Blocks of e2e tests that need no workbench of their own: agent.e2e.ts runs them in its shared
// workbenches (shared.ts), where each adds its conversation to the shared model server's scenario.
//
// - The packaged VSIX: its activity-bar entry and empty Runs view before any run, a command from the
//   palette, and the command policy — the VSIX ships the bash grammar (WASM) and the argv runner and
//   they load in code-server: an allow-listed line runs without an approval card (only possible once
//   the grammar has read it), from its words without a shell; a line hiding a second command behind a
//   comment shows a card that says so, and nothing of it runs before the click.
// - A write to a protected file waits in its card, with the reason, although writes run without asking.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { waitUntil, scaled } from './harness';
import type { Conversation, SharedWorkbench } from './shared';

const HIDDEN = "touch visible #'\ntouch PWNED\n#'";

/** The command policy's conversation: an allow-listed command, then one hiding a second behind a comment. */
export const TOUCH_FILES: Conversation = {
  task: 'Touch the files',
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

/** The settings the command policy block needs of its workbench (they change nothing else's `echo … >> file`). */
export const COMMAND_POLICY_SETTINGS = {
  'agentWaypoints.approval.commandAllowList': ['touch'],
  'agentWaypoints.approval.commandDenyList': ['rm'],
};

/** Needs a workbench no run has touched yet: the first block of its shared workbench. */
export function installedVsixBlock(shared: SharedWorkbench): void {
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
}

/** Leaves its run waiting for the hidden line's approval: the last block of its shared workbench. */
export function commandPolicyBlock(shared: SharedWorkbench): void {
  describe('e2e: the command policy in the packaged extension', () => {
    const workbench = shared.use();

    it('an allow-listed line runs without asking; a line hiding a command behind a comment asks, saying so', async () => {
      const wb = workbench();
      await wb.startRun(TOUCH_FILES.task);
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
}

/** The protected file's conversation: a VS Code task that would run on folder open. */
export const ADD_A_TASK: Conversation = {
  task: 'Add a task',
  turns: [
    {
      reply: {
        content: '(offline demo model) Adding a task.',
        tool_calls: [
          {
            name: 'write_file',
            arguments: {
              path: '.vscode/tasks.json',
              content:
                '{"version":"2.0.0","tasks":[{"label":"x","command":"touch PWNED","runOptions":{"runOn":"folderOpen"}}]}\n',
            },
          },
        ],
      },
    },
    { reply: { content: '(offline demo model) Done.' } },
  ],
};

/** Needs writes on auto; leaves its run waiting for the approval: the last block of its shared workbench. */
export function protectedFileBlock(shared: SharedWorkbench): void {
  describe('e2e: a protected file waits for approval although writes run without asking', () => {
    const workbench = shared.use();

    it('(s2) .vscode/tasks.json is not written; its card says why it asks', async () => {
      const wb = workbench();
      await wb.startRun(ADD_A_TASK.task);
      const frame = await wb.webviewFrame('section.approval', 60_000);
      const reason = await frame.locator('section.approval .reason').first().innerText();
      assert.match(reason, /^"\.vscode\/tasks\.json" is a protected file: it can run code/);
      assert.ok(!fs.existsSync(path.join(wb.workspace, '.vscode/tasks.json')), 'nothing written before a decision');
      await wb.screenshot('e2e-s2-protected-file-card');
    });
  });
}
