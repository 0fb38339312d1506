// What command handlers get from the composition root. Passed explicitly (no globals).
import type * as vscode from 'vscode';
import type { Actions } from '../actions';
import type { ModelProviders } from '../models/providers';
import type { AgentRunner } from '../runner/runner';
import type { CheckpointStore } from '../store/api/types';
import type { Settings } from '../settings';
import type { RunViewPanels } from '../views/run/panel';
import type { RunsTreeModel } from '../views/runs/treeModel';
import type { RunSessions } from '../views/session';

export interface CommandContext {
  store: CheckpointStore;
  runner: AgentRunner;
  /** The user's actions on runs (restore, fork, resume, decide) and their guards: the commands pick a target and call them. */
  actions: Actions;
  model: RunsTreeModel;
  sessions: RunSessions;
  panels: RunViewPanels;
  log: vscode.LogOutputChannel;
  settings(): Settings;
  /** True when a key is stored, or the endpoint is local and needs none. */
  hasUsableKey(): Promise<boolean>;
  /** The endpoint's and VS Code's models (start-run picker). */
  models: ModelProviders;
  /** Remembers the model last picked. */
  memento: vscode.Memento;
}
