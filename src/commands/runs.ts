// Start, resume, cancel, fork and delete runs. Resume and fork pick their target here and call
// their actions (actions/resume.ts, actions/fork.ts), the same the run view and the tree call.
import * as vscode from 'vscode';
import { redactUrl } from '../common/redact';
import { CommandIds } from '../contributes';
import { pickModel } from '../models/picker';
import { errorMessage } from '../runner/errors';
import type { ModelRef } from '../runner/modelRef';
import { PROVIDER_ADAPTER } from '../runner/provider';
import type { CommandContext } from './context';
import { pickCheckpointTarget, pickRun, stepOf } from './pickers';
import { registerCommand } from './register';

export function registerRunCommands(c: CommandContext): vscode.Disposable {
  return vscode.Disposable.from(
    registerCommand(CommandIds.startRun, (task?: string, opts?: Partial<ModelRef>) => startRun(c, task, opts)),
    registerCommand(CommandIds.resumeRun, (arg?: unknown) => resumeRun(c, arg)),
    registerCommand(CommandIds.cancelRun, async (arg?: unknown) => {
      const run = await pickRun(c.model, arg, {
        title: 'Cancel agent run',
        placeHolder: 'Which running agent run?',
        filter: (r) => c.runner.isActive(r.run_id),
        empty: 'Agent Waypoints: no run is executing in this window.',
      });
      if (run && !c.runner.cancel(run.run_id))
        void vscode.window.showInformationMessage(`Agent run “${run.title}” is not executing in this window.`);
      return run !== undefined;
    }),
    registerCommand(CommandIds.forkFromCheckpoint, async (arg?: unknown, opts?: { withFiles?: boolean }) => {
      const target = await pickCheckpointTarget(c, arg, {
        title: 'Fork from checkpoint',
        placeHolder: 'Fork which run?',
        checkpointTitle: (run) => `Fork “${run.title}” from…`,
      });
      if (!target) return undefined;
      return c.actions.fork.run(target, typeof opts?.withFiles === 'boolean' ? { withFiles: opts.withFiles } : {});
    }),
    registerCommand(CommandIds.openRun, async (arg?: unknown) => {
      const run = await pickRun(c.model, arg, {
        title: 'Open agent run',
        placeHolder: 'Which run?',
        empty: 'Agent Waypoints: there are no runs.',
      });
      if (!run) return undefined;
      const step = stepOf(arg);
      await c.panels.show(run.run_id, step === undefined ? { kind: 'end' } : { kind: 'step', step });
      return run.run_id;
    }),
    registerCommand(CommandIds.deleteRun, async (arg?: unknown, opts?: { confirmed?: boolean }) => {
      const run = await pickRun(c.model, arg, {
        title: 'Delete agent run',
        placeHolder: 'Which run?',
        empty: 'Agent Waypoints: there are no runs.',
      });
      if (!run) return false;
      if (c.runner.isActive(run.run_id)) {
        void vscode.window.showWarningMessage(`Agent run “${run.title}” is executing; cancel it first.`);
        return false;
      }
      const ok =
        opts?.confirmed ||
        (await vscode.window.showWarningMessage(
          `Delete agent run “${run.title}” and its ${run.last_seq} checkpoints? This cannot be undone (export it first to keep a copy).`,
          { modal: true },
          'Delete',
        )) === 'Delete';
      if (!ok) return false;
      try {
        await c.store.deleteRun(run.run_id);
      } catch (err) {
        void vscode.window.showErrorMessage(`Agent Waypoints: could not delete “${run.title}”: ${errorMessage(err)}`);
        return false;
      }
      c.log.info(`deleted run ${run.run_id}`);
      return true;
    }),
  );
}

/** `model`/`adapter` (tests, other callers) skip the picker; `adapter: 'vscode-lm'` uses VS Code's language models. */
async function startRun(
  c: CommandContext,
  taskArg?: string,
  opts: Partial<ModelRef> = {},
): Promise<string | undefined> {
  const task =
    typeof taskArg === 'string'
      ? taskArg
      : await vscode.window.showInputBox({
          title: 'Start agent run',
          prompt: 'What should the agent do? Every phase is checkpointed; you can resume after a reload or crash.',
          placeHolder: 'e.g. Add input validation to src/api.ts and a test for it',
          ignoreFocusOut: true,
          validateInput: (v) => (v.trim() ? undefined : 'Describe the task.'),
        });
  if (!task?.trim()) return undefined;
  const s = c.settings();
  const ref =
    opts.model !== undefined || typeof taskArg === 'string'
      ? { adapter: opts.adapter ?? PROVIDER_ADAPTER, model: opts.model ?? s.model }
      : await pickModel(c.models, c.memento);
  if (!ref) return undefined;
  if (ref.adapter === PROVIDER_ADAPTER && !(await c.hasUsableKey())) {
    const pick = await vscode.window.showWarningMessage(
      `No API key is set for ${redactUrl(s.baseUrl)}. Set one now? It is kept in VS Code SecretStorage only.`,
      'Set API key',
    );
    if (pick) await vscode.commands.executeCommand(CommandIds.setApiKey);
    if (!(await c.hasUsableKey())) return undefined;
  }
  try {
    const handle = await c.runner.start({
      task: task.trim(),
      model: ref.model,
      adapter: ref.adapter,
      budget: s.budget,
    });
    const run = await c.store.getRun(handle.runId);
    c.sessions.track(handle, run?.title ?? task);
    c.log.info(
      `started run ${handle.runId} with ${ref.model} ${ref.adapter === PROVIDER_ADAPTER ? `at ${redactUrl(s.baseUrl)}` : `(${ref.adapter})`}`,
    );
    return handle.runId;
  } catch (err) {
    void vscode.window.showErrorMessage(`Agent Waypoints: could not start the run: ${errorMessage(err)}`);
    return undefined;
  }
}

/** "Resume agent session": picks a run not executing here; the action shows a finished one's result, or continues it. */
async function resumeRun(c: CommandContext, arg?: unknown): Promise<string | undefined> {
  const run = await pickRun(c.model, arg, {
    title: 'Resume agent session',
    placeHolder: 'Choose a run to resume (finished runs show their result)',
    filter: (r) => !c.runner.isActive(r.run_id),
    empty: 'Agent Waypoints: there is no run to resume. Start one with “Agent Waypoints: Start agent run”.',
  });
  return run ? c.actions.resume.run(run) : undefined;
}
