// Start, resume, cancel, fork and delete runs.
import * as vscode from 'vscode';
import { redactUrl } from '../common/redact';
import { pickModel } from '../models/picker';
import { ResumeNeedsConfirmationError, errorMessage } from '../runner/errors';
import { lastJournaledSeq } from '../runner/files/restorePlan';
import type { ModelRef } from '../runner/modelRef';
import { PROVIDER_ADAPTER } from '../runner/provider';
import type { RunHandle } from '../runner/runner';
import { RunLockedError } from '../store/api/errors';
import { isTerminalState, type RunSummary } from '../store/api/schema';
import { checkpointUri } from '../views/checkpointDocument';
import { checkpointOf, pickCheckpoint, pickRun, stepOf } from '../views/pickers';
import type { CommandContext } from './context';
import { CommandIds } from './ids';
import { registerCommand } from './register';
import { restoreFlow } from './restore';

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
    registerCommand(CommandIds.forkFromCheckpoint, (arg?: unknown, opts?: { withFiles?: boolean }) =>
      forkRun(c, arg, opts),
    ),
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

/** "Resume agent session": a finished run shows its stored result; anything else continues where it stopped. */
async function resumeRun(c: CommandContext, arg?: unknown): Promise<string | undefined> {
  const run = await pickRun(c.model, arg, {
    title: 'Resume agent session',
    placeHolder: 'Choose a run to resume (finished runs show their result)',
    filter: (r) => !c.runner.isActive(r.run_id),
    empty: 'Agent Waypoints: there is no run to resume. Start one with “Agent Waypoints: Start agent run”.',
  });
  if (!run) return undefined;
  // A finished run shows its stored result in its run view (nothing runs); there the user can send a follow-up.
  if (isTerminalState(run.state)) {
    await c.panels.show(run.run_id);
    return run.state;
  }
  if (run.pending_approvals > 0) {
    await c.panels.show(run.run_id, { kind: 'firstPending' });
    return 'awaiting_approval';
  }
  const opts = run.state === 'paused_budget' ? await raisedBudget(c, run) : {};
  if (!opts) return undefined;
  const handle = await tryResume(c, run, opts);
  if (handle) c.sessions.track(handle, run.title);
  return handle ? 'running' : undefined;
}

async function tryResume(
  c: CommandContext,
  run: RunSummary,
  opts: { budget?: { max_steps: number }; confirmed?: boolean },
): Promise<RunHandle | undefined> {
  try {
    return await c.runner.resume(run.run_id, opts);
  } catch (err) {
    if (err instanceof ResumeNeedsConfirmationError) {
      const ok = await vscode.window.showWarningMessage(
        `Resume “${run.title}”?`,
        { modal: true, detail: `${err.reasons.join('.\n')}.` },
        'Resume anyway',
      );
      return ok ? tryResume(c, run, { ...opts, confirmed: true }) : undefined;
    }
    if (err instanceof RunLockedError) {
      const h = err.holder;
      const pick = await vscode.window.showWarningMessage(
        `“${run.title}” is held by ${h.label} (pid ${h.pid} on ${h.hostname}). Only one window can run it; here you can view it read-only.`,
        'Open latest checkpoint (read-only)',
      );
      if (pick) await vscode.window.showTextDocument(checkpointUri(run.run_id, run.last_seq));
      return undefined;
    }
    c.log.error(`resume of ${run.run_id} failed: ${errorMessage(err)}`);
    void vscode.window.showErrorMessage(`Agent Waypoints: could not resume “${run.title}”: ${errorMessage(err)}`);
    return undefined;
  }
}

async function raisedBudget(
  c: CommandContext,
  run: RunSummary,
): Promise<{ budget: { max_steps: number } } | undefined> {
  const suggested = run.step + (c.settings().budget.max_steps ?? 25);
  const value = await vscode.window.showInputBox({
    title: `Resume “${run.title}” with a higher budget`,
    prompt: `${run.state_detail ?? 'The run hit its budget.'} New maximum number of steps:`,
    value: String(suggested),
    validateInput: (v) => (/^\d+$/.test(v) && Number(v) > run.step ? undefined : `A whole number above ${run.step}.`),
  });
  return value ? { budget: { max_steps: Number(value) } } : undefined;
}

async function forkRun(
  c: CommandContext,
  arg?: unknown,
  opts: { withFiles?: boolean } = {},
): Promise<string | undefined> {
  let target = checkpointOf(arg);
  if (!target) {
    const run = await pickRun(c.model, arg, {
      title: 'Fork from checkpoint',
      placeHolder: 'Fork which run?',
      empty: 'Agent Waypoints: there are no runs.',
    });
    if (!run) return undefined;
    const record = await pickCheckpoint(c.store, run.run_id, `Fork “${run.title}” from…`);
    if (!record) return undefined;
    target = { runId: record.run_id, seq: record.seq };
  }
  const withFiles = opts.withFiles ?? (await askWithFiles(c, target));
  if (withFiles === undefined) return undefined;
  if (withFiles) return (await restoreFlow(c, target, { rewind: true }))?.forked_run_id ?? undefined;
  try {
    const { run, lease } = await c.store.fork(target.runId, target.seq, c.runner.owner);
    try {
      await c.store.setRunState(
        run.run_id,
        'paused_cancelled',
        `Forked from run ${target.runId} at checkpoint #${target.seq}. Resume it to continue from there.`,
      );
    } finally {
      await lease.release();
    }
    // Not awaited: the command returns the fork at once; the button resumes it whenever clicked.
    void vscode.window
      .showInformationMessage(
        `Forked into “${run.title}”. Resume it to continue from checkpoint #${target.seq}.`,
        'Resume now',
      )
      .then((pick) => (pick ? resumeRun(c, run.run_id) : undefined));
    return run.run_id;
  } catch (err) {
    void vscode.window.showErrorMessage(`Agent Waypoints: could not fork: ${errorMessage(err)}`);
    return undefined;
  }
}

/** Conversation only, or conversation and files — asked only when the agent changed files after the checkpoint. */
async function askWithFiles(c: CommandContext, target: { runId: string; seq: number }): Promise<boolean | undefined> {
  const [effects, restores] = await Promise.all([
    c.store.listEffects(target.runId),
    c.store.listRestores(target.runId),
  ]);
  const last = lastJournaledSeq(effects, restores);
  if (last === null || last < target.seq) return false;
  const pick = await vscode.window.showQuickPick(
    [
      {
        label: 'Conversation only',
        detail: 'The fork starts from the checkpoint; the files stay as they are now.',
        files: false,
      },
      {
        label: 'Conversation and files',
        detail: 'Restore the files the agent changed after the checkpoint (with a preview), then fork.',
        files: true,
      },
    ],
    { title: `Fork from checkpoint #${target.seq}`, placeHolder: 'The agent changed files after this checkpoint' },
  );
  return pick?.files;
}
