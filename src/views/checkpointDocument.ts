// Read-only JSON documents for checkpoints: agent-waypoints-checkpoint:/<run_id>/<seq>.json.
// The content always comes from the store (a snapshot-bearing checkpoint shows its full snapshot).
import { errorMessage } from '../common/errors';
import * as vscode from 'vscode';
import type { CheckpointStore } from '../store/api/types';

export const CHECKPOINT_SCHEME = 'agent-waypoints-checkpoint';

export function checkpointUri(runId: string, seq: number): vscode.Uri {
  return vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, path: `/${runId}/${seq}.json` });
}

export function parseCheckpointUri(uri: vscode.Uri): { runId: string; seq: number } | undefined {
  const m = /^\/([^/]+)\/(\d+)\.json$/.exec(uri.path);
  return m ? { runId: m[1]!, seq: Number(m[2]) } : undefined;
}

export class CheckpointDocumentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly store: CheckpointStore) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const key = parseCheckpointUri(uri);
    if (!key) return `// Not a checkpoint address: ${uri.toString()}`;
    try {
      const record = await this.store.get(key.runId, key.seq);
      if (!record) return `// Run ${key.runId} has no checkpoint #${key.seq} (deleted, or not written yet).`;
      const loaded = record.snapshot ? await this.store.loadSnapshot(key.runId, key.seq) : undefined;
      const doc = loaded && loaded.record.seq === record.seq ? { ...record, snapshot: loaded.snapshot } : record;
      return JSON.stringify(doc, null, 2);
    } catch (err) {
      // A corrupt checkpoint is shown as such, never as an empty document.
      return `// Could not read checkpoint #${key.seq} of run ${key.runId}:\n// ${errorMessage(err)}`;
    }
  }
}

export function registerCheckpointDocuments(store: CheckpointStore): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, new CheckpointDocumentProvider(store));
}

/** Opens a checkpoint as a read-only JSON document (the command, the run view's phase chips, a locked run). */
export async function openCheckpointDocument(runId: string, seq: number): Promise<vscode.TextDocument> {
  const doc = await vscode.workspace.openTextDocument(checkpointUri(runId, seq));
  await vscode.languages.setTextDocumentLanguage(doc, 'json');
  await vscode.window.showTextDocument(doc, { preview: true });
  return doc;
}
