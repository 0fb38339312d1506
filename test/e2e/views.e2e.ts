import assert from 'node:assert/strict';
import { useWorkbench, scaled } from './harness';

describe('e2e: the installed VSIX in a real workbench', () => {
  const workbench = useWorkbench();

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
