/**
 * Every command the extension contributes. A unit test checks this table against
 * package.json `contributes.commands`, and an in-host test checks it against what
 * VS Code reports as registered, so the manifest and the code cannot drift apart.
 */
export const CommandIds = {
  setApiKey: 'agentWaypoints.setApiKey',
  clearApiKey: 'agentWaypoints.clearApiKey',
  showLog: 'agentWaypoints.showLog',
} as const;

export type CommandId = (typeof CommandIds)[keyof typeof CommandIds];
