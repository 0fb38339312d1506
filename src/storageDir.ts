// Where this workspace's checkpoints live. VS Code gives each extension host a workspace storage
// folder and locks it (`workspaceStorage/<id>/vscode.lock`); a second extension host of the same
// workspace at the same time — a second browser tab of code-server, a second remote client — gets
// a sibling `<id>-1` (then `-2` …) so that extensions never share a folder by accident. Agent
// Waypoints wants the opposite: one history per workspace, whatever window looks at it, with its own
// per-run owner lock deciding who may write (src/store/README.md, "Ownership"). So when VS Code hands
// us such a sibling and the first folder exists, every window uses the first.
import fs from 'node:fs';
import path from 'node:path';

export function checkpointStorageDir(storageUriPath: string): string {
  const extensionDir = path.basename(storageUriPath);
  const workspaceDir = path.dirname(storageUriPath);
  // Workspace ids are hashes (hex, possibly with a leading "-"); only the lock fallback appends "-<n>".
  const m = /^(.*[^-])-(\d+)$/.exec(path.basename(workspaceDir));
  if (!m) return storageUriPath;
  const first = path.join(path.dirname(workspaceDir), m[1]!);
  return fs.existsSync(first) ? path.join(first, extensionDir) : storageUriPath;
}
