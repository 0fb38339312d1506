// Which run store the command line opens for a workspace — the same one a VS Code window of it
// uses: --store DIR (or AGENT_WAYPOINTS_STORE), else the folder the extension recorded for this
// workspace (storageDir.ts). With a shared store's connection string (AGENT_WAYPOINTS_PG_URL, or
// the file AGENT_WAYPOINTS_PG_URL_FILE names) the shared store joins it as in the window
// (CombinedStore: new runs go there), keyed by the workspace identity; alone when no local one is known.
import fs from 'node:fs';
import path from 'node:path';
import { CombinedStore, openDiskStore, openDiskStoreReady, openPgStore, openPgStoreReady } from '../store';
import type { CheckpointStore } from '../store/api/types';
import { recordedStorageDir } from '../storageDir';
import { workspaceIdentity } from '../workspaceIdentity';
import { ConfigError } from './config';

export interface CliStore {
  store: CheckpointStore;
  /** The local store's folder (tools never write into it), when there is one. */
  storageDir: string | undefined;
  /** For messages: where the runs are. */
  where: string;
}

/** How long a command waits for the shared store before it gives up. */
const CONNECT_MS = 20_000;

export class NoStoreError extends ConfigError {
  override name = 'NoStoreError';
}

export async function openCliStore(o: {
  storeDir: string | undefined;
  workspace: string;
  env: NodeJS.ProcessEnv;
  workspaceName: string;
}): Promise<CliStore> {
  const explicit = o.storeDir ?? o.env.AGENT_WAYPOINTS_STORE;
  const storageDir = explicit ? path.resolve(explicit) : recordedStorageDir(o.workspace);
  const url = pgUrl(o.env);
  if (!url) {
    if (!storageDir)
      throw new NoStoreError(
        `no run store is known for ${o.workspace}: open this folder once in VS Code with Agent Waypoints (it records where its runs are), or pass --store DIR`,
      );
    return { store: await openDiskStoreReady(storageDir), storageDir, where: storageDir };
  }
  const id = await workspaceIdentity(o.workspace, o.workspaceName);
  if (id.how === 'none')
    throw new ConfigError(
      `${o.workspace} has no git remote, so the shared store cannot tell which project it is: set "store.workspaceName" in the config file`,
    );
  const where = `the shared store (project ${id.label})`;
  if (!storageDir)
    return { store: await openPgStoreReady({ connectionString: url, workspace: id.id }), storageDir, where };
  const combined = new CombinedStore({
    local: openDiskStore(storageDir),
    openShared: async (onStatus) => openPgStore({ connectionString: url, workspace: id.id, onStatus }),
  });
  await connected(combined).catch(async (err: unknown) => {
    await combined.close(1000);
    throw err;
  });
  return { store: combined, storageDir, where: `${where} and ${storageDir}` };
}

export function pgUrl(env: NodeJS.ProcessEnv): string | undefined {
  if (env.AGENT_WAYPOINTS_PG_URL) return env.AGENT_WAYPOINTS_PG_URL;
  const file = env.AGENT_WAYPOINTS_PG_URL_FILE;
  if (!file) return undefined;
  try {
    return fs.readFileSync(file, 'utf8').trim() || undefined;
  } catch (err) {
    throw new ConfigError(`cannot read the file AGENT_WAYPOINTS_PG_URL_FILE names: ${(err as Error).message}`);
  }
}

/** Waits until the shared store answers; a store that refuses or stays away is an error (said, not retried forever). */
async function connected(combined: CombinedStore): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const settle = (): boolean => {
      const s = combined.state;
      if (s.kind === 'connected') resolve();
      else if (s.kind === 'refused') reject(new Error(`the shared store refused: ${s.error}`));
      else return false;
      return true;
    };
    if (settle()) return;
    const timer = setTimeout(() => {
      sub.dispose();
      const s = combined.state;
      reject(new Error(`the shared store is unreachable${s.kind === 'unreachable' ? `: ${s.error}` : ''}`));
    }, CONNECT_MS);
    const sub = combined.onState(() => {
      if (!settle()) return;
      clearTimeout(timer);
      sub.dispose();
    });
  });
}
