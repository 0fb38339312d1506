// Which run store this window uses: the local one (default; workspace storage on this machine), or
// — agentWaypoints.store.kind = "postgres" — a shared PostgreSQL store beside it (CombinedStore).
// The connection string lives in SecretStorage only; TLS comes from the connection string or the
// store.tls settings; the project is the workspace identity (git remote + path inside it, or a name).
import fs from 'node:fs';
import * as vscode from 'vscode';
import { CombinedStore, openDiskStore, openPgStore, type SharedState } from './store';
import type { CheckpointStore } from './store/api/types';
import type { PgTls } from './store/pg/conn';
import { workspaceIdentity, type WorkspaceIdentity } from './workspaceIdentity';

/** The SecretStorage key of the shared store's connection string (it holds the password). */
export const SHARED_STORE_SECRET = 'agentWaypoints.sharedStore.connectionString';

export interface StoreSettings {
  kind: 'local' | 'postgres';
  workspaceName: string;
  tls: { enabled: boolean; rejectUnauthorized: boolean; caFile: string; certFile: string; keyFile: string };
}

export function readStoreSettings(): StoreSettings {
  const c = vscode.workspace.getConfiguration('agentWaypoints.store');
  return {
    kind: c.get<string>('kind', 'local') === 'postgres' ? 'postgres' : 'local',
    workspaceName: c.get('workspaceName', ''),
    tls: {
      enabled: c.get('tls.enabled', false),
      rejectUnauthorized: c.get('tls.rejectUnauthorized', true),
      caFile: c.get('tls.caFile', ''),
      certFile: c.get('tls.certFile', ''),
      keyFile: c.get('tls.keyFile', ''),
    },
  };
}

/**
 * `pg`'s ssl option from the settings (files read now); undefined leaves TLS to the connection
 * string (sslmode=require …), which `pg` applies over anything given here.
 */
export function tlsOptions(t: StoreSettings['tls']): PgTls | undefined {
  if (!t.enabled) return undefined;
  const read = (f: string) => (f ? fs.readFileSync(f, 'utf8') : undefined);
  const files = { ca: read(t.caFile), cert: read(t.certFile), key: read(t.keyFile) };
  return {
    rejectUnauthorized: t.rejectUnauthorized,
    ...Object.fromEntries(Object.entries(files).filter(([, v]) => v !== undefined)),
  };
}

/** What the user must do when there is no identity to share runs under. */
export const NO_IDENTITY =
  'This folder has no git remote, so its runs cannot follow the project to another checkout: set agentWaypoints.store.workspaceName to a name for it, or run “Connect a shared run store…” again.';

export interface ChosenStore {
  store: CheckpointStore;
  /** Set when the kind is postgres: the shared store's state drives the Runs view's message. */
  combined?: CombinedStore;
}

/** The store the settings choose. Returns at once; the shared store connects in the background. */
export function chooseStore(o: {
  storageDir: string;
  workspaceRoot: string;
  secrets: vscode.SecretStorage;
  log: vscode.LogOutputChannel;
}): ChosenStore {
  const settings = readStoreSettings();
  const local = openDiskStore(o.storageDir);
  if (settings.kind === 'local') return { store: local };
  const combined = new CombinedStore({
    local,
    openShared: async (onStatus) => {
      const url = await o.secrets.get(SHARED_STORE_SECRET);
      if (!url) throw new Error('no connection string yet: run “Connect a shared run store…”');
      const id = await identityOf(o.workspaceRoot, settings);
      o.log.info(`shared run store: project ${id.label} (${id.how === 'name' ? 'a chosen name' : 'its git remote'})`);
      return openPgStore({ connectionString: url, workspace: id.id, ssl: tlsOptions(settings.tls), onStatus });
    },
  });
  combined.onState((s) => o.log.info(`shared run store: ${sharedStateText(s) ?? 'connected'}`));
  return { store: combined, combined };
}

export async function identityOf(root: string, settings: StoreSettings): Promise<WorkspaceIdentity> {
  const id = await workspaceIdentity(root, settings.workspaceName);
  if (id.how === 'none') throw new Error(NO_IDENTITY);
  return id;
}

/** The Runs view's message for the shared store (undefined: connected, nothing to say). */
export function sharedStateText(s: SharedState): string | undefined {
  switch (s.kind) {
    case 'connected':
      return undefined;
    case 'connecting':
      return 'Connecting to the shared run store…';
    case 'unreachable':
      return `Shared store unreachable (${s.error}). Retrying every ${Math.round(s.retryMs / 1000)} s; runs on this machine stay usable.`;
    case 'refused':
      return `Shared store not in use: ${s.error}`;
  }
}
