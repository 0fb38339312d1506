// contextValue strings used in package.json `when` clauses (`viewItem == …`, `viewItem =~ /…/`).
// Kept here so code and manifest share one spelling; a unit test checks the manifest uses only these.
export const ContextValues = {
  group: 'group',
  /** Run items: `run.<state>`, plus `.resumable` when Resume applies and `.approvals` when some wait. */
  run: (state: string, flags: { resumable: boolean; approvals: boolean }) =>
    `run.${state}${flags.resumable ? '.resumable' : ''}${flags.approvals ? '.approvals' : ''}`,
  /** Thread items (a run and its follow-ups): `thread.<state>` of the run commands act on, with the same flags. */
  thread: (state: string, flags: { resumable: boolean; approvals: boolean }) =>
    `thread.${state}${flags.resumable ? '.resumable' : ''}${flags.approvals ? '.approvals' : ''}`,
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

/** Context keys set with `setContext` (used in `when` clauses of commands and views). */
export const ContextKeys = {
  hasRuns: 'agentWaypoints.hasRuns',
  hasStorage: 'agentWaypoints.hasStorage',
  restricted: 'agentWaypoints.restricted',
  hasActiveRun: 'agentWaypoints.hasActiveRun',
  /** The shared run store's state: off (local store), connecting, connected, unreachable, refused. */
  sharedStore: 'agentWaypoints.sharedStore',
} as const;
