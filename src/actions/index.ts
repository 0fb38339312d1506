// The user's actions on runs, one service each, vscode-free: decide (approvals), restore files
// (and undo), bring a run's files back into this checkout (and undo), fork, resume, hand a run to
// the workers and take it back — and the guards that say whether each may happen now, and why not.
// The composition root builds them once with the editor's ports; commands, the run view and the
// tree call them with types. The unit tests build them the same way with scripted ports.
import type { DecisionInput, ResumeOptions, StartedRun } from '../runner/runner';
import type { CheckpointStore, OwnerInfo } from '../store/api/types';
import { DecideAction } from './decide';
import { ForkAction, forkPaused } from './fork';
import { RunGuards } from './guards';
import type { ActionLog, Notices, RestoreEditor, RunViews } from './ports';
import { RestoreAction } from './restore/action';
import { fsRestoreWriter, type RestoreScope, type RestoreWriter } from './restore/files';
import { ResumeAction } from './resume';
import { localDecider } from '../runner/decider';
import { BringBackAction } from './bringBack/action';
import { DEFAULT_FILE_RULES, type FileRules } from '../runner/tools/protectedFiles';
import type { DecidedBy } from '../store/api/schema';
import { BackgroundRuns } from './background';
import { HandOffAction } from './handOff';

export interface Actions {
  guards: RunGuards;
  decide: DecideAction;
  restore: RestoreAction;
  bringBack: BringBackAction;
  fork: ForkAction;
  resume: ResumeAction;
  handOff: HandOffAction;
  /** The runs the workers have, kept current by the shared store's feed (connected by the root). */
  background: BackgroundRuns;
}

export interface ActionsDeps {
  store: CheckpointStore;
  runner: {
    isActive(runId: string): boolean;
    resume(runId: string, opts?: ResumeOptions): Promise<StartedRun>;
    decideApprovals(runId: string, decisions: DecisionInput[]): Promise<unknown>;
    /** Lets go of a run executing here at its next step boundary (a hand-off); false when not executing here. */
    letGo?(runId: string, detail: string): boolean;
  };
  /** This window, as it holds runs. */
  owner: OwnerInfo;
  /** The workspace a restore writes (never the extension's storage). */
  scope: RestoreScope;
  /** Default: the files on disk (fsRestoreWriter). */
  writer?: RestoreWriter;
  /** The protected files a bring-back writes only when chosen (default: the built-in list). */
  fileRules?(): FileRules;
  /** Workspace trust (restricted mode refuses restores and decisions). */
  trusted(): boolean;
  notices: Notices;
  log: ActionLog;
  restoreEditor: RestoreEditor;
  views: RunViews;
  /** The settings' step limit (a resumed run paused on its budget suggests its step plus this). */
  maxSteps(): number;
  /** Adds an external tool to the always-allow list (absent: not offered). */
  allowTool?(toolName: string): Promise<string>;
  /** Adds domains to the user's allowed domains for the sandbox ("Always" on a blocked command). */
  allowDomains?(domains: readonly string[]): Promise<void>;
  /** Who decides, hands off and takes back here (default: this user on this machine, in a window). */
  by?: DecidedBy;
  /** Shows a long step with a spinner (default: just runs it). */
  progress?<T>(title: string, task: () => Promise<T>): Promise<T>;
}

export function createActions(d: ActionsDeps): Actions {
  const { store, owner, notices, log } = d;
  const by = d.by ?? localDecider(owner.hostname);
  const background = new BackgroundRuns({
    store,
    notices,
    log,
    open: (runId, waiting) => d.views.show(runId, waiting ? { kind: 'firstPending' } : { kind: 'end' }),
    bringBack: (runId) => handOff.bringBackHere(runId),
  });
  const guards = new RunGuards({
    store,
    isActive: (id) => d.runner.isActive(id),
    owner,
    trusted: d.trusted,
    withWorkers: (id) => background.facts(id),
  });
  const resume = new ResumeAction({
    store,
    runner: d.runner,
    views: d.views,
    notices,
    log,
    maxSteps: d.maxSteps,
    withWorkers: async (id) => {
      const port = store.isShared(id) ? background.port() : null;
      const h = port ? await port.get(id) : undefined;
      return h !== undefined && h.wantedBack === null;
    },
    bringBack: (id) => handOff.bringBackHere(id),
  });
  const restore = new RestoreAction({
    store,
    owner,
    scope: d.scope,
    writer: d.writer ?? fsRestoreWriter(store, d.scope),
    guards,
    editor: d.restoreEditor,
    notices,
    log,
    forkRestored: async (from) => (await forkPaused({ store, owner }, from, { restoredFiles: true })).run_id,
    resume: (runId) => resume.run(runId),
  });
  const bringBack = new BringBackAction({
    store,
    owner,
    scope: d.scope,
    writer: fsRestoreWriter(store, d.scope, { atomic: true }),
    rules: () => d.fileRules?.() ?? DEFAULT_FILE_RULES,
    guards,
    editor: d.restoreEditor,
    notices,
    log,
  });
  const fork = new ForkAction({
    store,
    owner,
    guards,
    notices,
    restoreAndRewind: (from) => restore.run(from, { rewind: true }),
    resume: (runId) => resume.run(runId),
  });
  const decide = new DecideAction({
    store,
    runner: d.runner,
    guards,
    ...(d.allowTool ? { allowTool: d.allowTool } : {}),
    ...(d.allowDomains ? { allowDomains: d.allowDomains } : {}),
    workers: { port: () => background.port(), isShared: (id) => store.isShared(id), by, notices, log },
  });
  const handOff: HandOffAction = new HandOffAction({
    store,
    runner: { isActive: (id) => d.runner.isActive(id), letGo: (id, detail) => d.runner.letGo?.(id, detail) ?? false },
    guards,
    background,
    bringBack,
    resume,
    notices,
    log,
    by,
    progress: d.progress ?? ((_title, task) => task()),
  });
  return { guards, decide, restore, bringBack, fork, resume, handOff, background };
}

export type { CheckpointTarget } from './fork';
