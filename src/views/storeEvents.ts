// What the user and the log hear about the store by itself: failed writes and damaged data found.
import * as vscode from 'vscode';
import type { CheckpointStore, Disposable } from '../store/api/types';

export function reportStoreEvents(store: CheckpointStore, log: vscode.LogOutputChannel): Disposable {
  return store.onEvent((e) => {
    if (e.kind === 'write-error') log.error(`storage write failed${e.run_id ? ` for run ${e.run_id}` : ''}: ${e.error.message}`);
    if (e.kind === 'corruption') {
      log.error(`corrupt checkpoint data: ${e.report.lost}; quarantined: ${e.report.quarantined.map((q) => `${q.file} → ${q.to}`).join(', ')}`);
      void vscode.window.showErrorMessage(`Agent Waypoints found damaged checkpoint data and kept a copy in quarantine. ${e.report.lost}`, 'Show log').then((p) => p && log.show());
    }
  });
}
