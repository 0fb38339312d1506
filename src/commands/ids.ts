/**
 * Every command the extension contributes. A unit test checks this table against
 * package.json `contributes.commands`, and an in-host test checks it against what
 * VS Code reports as registered, so the manifest and the code cannot drift apart.
 */
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
} as const;

export type CommandId = (typeof CommandIds)[keyof typeof CommandIds];
