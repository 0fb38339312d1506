// Where this workspace's checkpoints live. VS Code gives each extension host a workspace storage
// folder and locks it (`workspaceStorage/<id>/vscode.lock`); a second extension host of the same
// workspace at the same time — a second browser tab of code-server, a second remote client — gets
// a sibling `<id>-1` (then `-2` …) so that extensions never share a folder by accident. Agent
// Waypoints wants the opposite: one history per workspace, whatever window looks at it, with its own
// per-run owner lock deciding who may write (src/store/README.md, "Ownership"). So when VS Code hands
// us such a sibling and the first folder exists, every window uses the first.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

export function checkpointStorageDir(storageUriPath: string): string {
  const extensionDir = path.basename(storageUriPath);
  const workspaceDir = path.dirname(storageUriPath);
  // Workspace ids are hashes (hex, possibly with a leading "-"); only the lock fallback appends "-<n>".
  const m = /^(.*[^-])-(\d+)$/.exec(path.basename(workspaceDir));
  if (!m) return storageUriPath;
  const first = path.join(path.dirname(workspaceDir), m[1]!);
  return fs.existsSync(first) ? path.join(first, extensionDir) : storageUriPath;
}

// The command line (src/cli) works on the same runs as the window. VS Code derives the storage
// folder's name from things a terminal cannot see reliably (the folder's inode, the profile, the
// flavour of VS Code), so the extension records where it keeps a workspace's runs, in a small file
// per workspace under the user's Agent Waypoints folder, and the command line reads it.

/** The user's Agent Waypoints folder: the command line's config file and the record of each workspace's storage. */
export function agentHome(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (env.AGENT_WAYPOINTS_HOME) return path.resolve(env.AGENT_WAYPOINTS_HOME);
  const home = os.homedir();
  if (platform === 'win32') return path.join(env.APPDATA ?? path.join(home, 'AppData', 'Roaming'), 'agent-waypoints');
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'agent-waypoints');
  return path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'agent-waypoints');
}

const StorageRecord = z.object({ workspace: z.string(), storageDir: z.string(), updated_ms: z.number() });

/** The file recording a workspace's storage: keyed by its real path (a symlinked checkout is the same one). */
function recordFile(workspaceRoot: string, home: string): string {
  let real = path.resolve(workspaceRoot);
  try {
    real = fs.realpathSync(real);
  } catch {
    // a folder that is gone: its record (if any) is looked up by the path as given
  }
  const key = crypto.createHash('sha256').update(real).digest('hex').slice(0, 32);
  return path.join(home, 'workspaces', `${key}.json`);
}

/** Records where the window keeps this workspace's runs (written whole: a temp file renamed over the old one). */
export async function recordStorageDir(workspaceRoot: string, storageDir: string, home = agentHome()): Promise<void> {
  const file = recordFile(workspaceRoot, home);
  const record = { workspace: path.resolve(workspaceRoot), storageDir, updated_ms: Date.now() };
  await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.promises.writeFile(tmp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await fs.promises.rename(tmp, file);
}

/** Where the window keeps this workspace's runs, as it recorded it; undefined when no window recorded it (or the folder is gone). */
export function recordedStorageDir(workspaceRoot: string, home = agentHome()): string | undefined {
  let raw: string;
  try {
    raw = fs.readFileSync(recordFile(workspaceRoot, home), 'utf8');
  } catch {
    return undefined;
  }
  const parsed = StorageRecord.safeParse(safeJson(raw));
  if (!parsed.success || !fs.existsSync(parsed.data.storageDir)) return undefined;
  return parsed.data.storageDir;
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
