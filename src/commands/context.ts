// What command handlers get from the composition root. Passed explicitly (no globals).
import type * as vscode from 'vscode';
import type { ModelProviders } from '../models/providers';
import type { AgentRunner } from '../runner/runner';
import type { CheckpointStore } from '../store/api/types';
import type { Settings } from '../settings';
import type { RunViewPanels } from '../views/run/panel';
import type { RunsTreeModel } from '../views/runs/treeModel';
import type { VersionDocuments } from '../views/restore/preview';
import type { FileRestorer } from '../views/restore/restorer';
import type { RunSessions } from '../views/session';

export interface CommandContext {
  store: CheckpointStore;
  runner: AgentRunner;
  model: RunsTreeModel;
  sessions: RunSessions;
  panels: RunViewPanels;
  restorer: FileRestorer;
  versions: VersionDocuments;
  log: vscode.LogOutputChannel;
  settings(): Settings;
  /** True when a key is stored, or the endpoint is local and needs none. */
  hasUsableKey(): Promise<boolean>;
  /** The endpoint's and VS Code's models (start-run picker). */
  models: ModelProviders;
  /** Remembers the model last picked. */
  memento: vscode.Memento;
}
