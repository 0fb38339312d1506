// The one table of what package.json `contributes` names and the code uses: command ids, view ids,
// context keys (`setContext`) and context values (tree items' `contextValue`, matched by `viewItem`
// in menus). Commands, views and the root import it from here (no layer owns it), and no file in
// src/ spells one of these strings itself. A unit test (test/unit/manifest.test.ts) checks the
// manifest against this table, and an in-host test what VS Code reports as registered.

/** Every command the extension contributes. */
export const CommandIds = {
  startRun: 'agentWaypoints.startRun',
  resumeRun: 'agentWaypoints.resumeRun',
  showApprovals: 'agentWaypoints.showApprovals',
  openRun: 'agentWaypoints.openRun',
  cancelRun: 'agentWaypoints.cancelRun',
  forkFromCheckpoint: 'agentWaypoints.forkFromCheckpoint',
  openCheckpoint: 'agentWaypoints.openCheckpoint',
  deleteRun: 'agentWaypoints.deleteRun',
  exportRun: 'agentWaypoints.exportRun',
  importRun: 'agentWaypoints.importRun',
  setApiKey: 'agentWaypoints.setApiKey',
  clearApiKey: 'agentWaypoints.clearApiKey',
  forgetKeyOrigins: 'agentWaypoints.forgetKeyOrigins',
  showLog: 'agentWaypoints.showLog',
  refreshRuns: 'agentWaypoints.refreshRuns',
  loadMoreCheckpoints: 'agentWaypoints.loadMoreCheckpoints',
  checkConnection: 'agentWaypoints.checkConnection',
  restoreFiles: 'agentWaypoints.restoreFiles',
  restartMcpServer: 'agentWaypoints.restartMcpServer',
  alwaysAllowTool: 'agentWaypoints.alwaysAllowTool',
  revokeToolApproval: 'agentWaypoints.revokeToolApproval',
  openMcpConfig: 'agentWaypoints.openMcpConfig',
  forgetMcpInputs: 'agentWaypoints.forgetMcpInputs',
  connectSharedStore: 'agentWaypoints.connectSharedStore',
  copyRunsToSharedStore: 'agentWaypoints.copyRunsToSharedStore',
  continueInBackground: 'agentWaypoints.continueInBackground',
  bringBackHere: 'agentWaypoints.bringBackHere',
  chooseCommandApproval: 'agentWaypoints.chooseCommandApproval',
  checkSandbox: 'agentWaypoints.checkSandbox',
} as const;

export type CommandId = (typeof CommandIds)[keyof typeof CommandIds];

/** The activity bar container, its tree view, the run view's webview type, the status bar item. */
export const ViewIds = {
  container: 'agentWaypoints',
  runs: 'agentWaypoints.runs',
  /** VS Code's own command that shows the Runs view. */
  focusRuns: 'agentWaypoints.runs.focus',
  runView: 'agentWaypoints.runView',
  /** The approval panel's view type before the run view replaced it: restored panels become run views. */
  legacyApprovals: 'agentWaypoints.approvals',
  activeRunStatus: 'agentWaypoints.activeRun',
} as const;

/** Context keys set with `setContext` (used in `when` clauses of commands and views). */
export const ContextKeys = {
  hasRuns: 'agentWaypoints.hasRuns',
  hasStorage: 'agentWaypoints.hasStorage',
  restricted: 'agentWaypoints.restricted',
  hasActiveRun: 'agentWaypoints.hasActiveRun',
  /** The shared run store's state: off (local store), connecting, connected, unreachable, refused. */
  sharedStore: 'agentWaypoints.sharedStore',
} as const;

/** What a run or thread item offers, in its context value (from actions/guards.ts). */
export interface RunItemFlags {
  /** Resume applies (guards: whyNotResume is null). */
  resumable: boolean;
  /** Some of its tool calls wait for a decision. */
  approvals: boolean;
  /** Continue in background applies (guards: whyNotHandOff is null). */
  background?: boolean;
  /** The workers have it: Bring back here applies. */
  workers?: boolean;
}

const flags = (f: RunItemFlags) =>
  `${f.resumable ? '.resumable' : ''}${f.approvals ? '.approvals' : ''}${f.background ? '.background' : ''}${f.workers ? '.workers' : ''}`;

/** Tree items' `contextValue`s, matched in package.json `when` clauses (`viewItem == …`, `viewItem =~ /…/`). */
export const ContextValues = {
  group: 'group',
  /** Run items: `run.<state>`, plus `.resumable` when Resume applies, `.approvals` when some wait, `.background` when it can be handed to the workers, `.workers` when they have it. */
  run: (state: string, f: RunItemFlags) => `run.${state}${flags(f)}`,
  /** Thread items (a run and its follow-ups): `thread.<state>` of the run commands act on, with the same flags. */
  thread: (state: string, f: RunItemFlags) => `thread.${state}${flags(f)}`,
  step: 'step',
  checkpoint: 'checkpoint',
  restore: 'restore',
  loadMore: 'loadMore',
  /** The MCP section of the Runs view (views/runs/servers.ts). */
  mcpSection: 'mcpSection',
  /** `mcpServer.<state>`: stopped, starting, ready, failed. */
  mcpServer: (state: string) => `mcpServer.${state}`,
  /** `mcpTool` / `mcpTool.allowed` (always allowed). */
  mcpTool: (allowed: boolean) => `mcpTool${allowed ? '.allowed' : ''}`,
  mcpRule: 'mcpRule',
} as const;
