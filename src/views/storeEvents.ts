// What the user and the log hear about the store by itself: failed writes, repairs, damaged data found.
import * as vscode from 'vscode';
import type { CheckpointStore, Disposable } from '../store/api/types';

export function reportStoreEvents(store: CheckpointStore, log: vscode.LogOutputChannel): Disposable {
  return store.onEvent((e) => {
    if (e.kind === 'write-error')
      log.error(`storage write failed${e.run_id ? ` for run ${e.run_id}` : ''}: ${e.error.message}`);
    if (e.kind === 'recovered') log.info(`recovered: ${e.message}`);
    if (e.kind === 'corruption') {
      const moved = e.report.quarantined.map((q) => `${q.file} → ${q.to}`).join(', ') || 'nothing moved';
      if (!e.report.data_lost) {
        log.warn(`repaired ${e.report.file}: ${e.report.reason}; lost ${e.report.lost}; quarantined: ${moved}`);
        return;
      }
      log.error(`damaged checkpoint data: ${e.report.reason}; lost ${e.report.lost}; quarantined: ${moved}`);
      const kept = e.report.quarantined.length > 0 ? ' The damaged files were kept in quarantine.' : '';
      void vscode.window
        .showErrorMessage(
          `Agent Waypoints found damaged checkpoint data: ${e.report.lost}.${kept} Nothing from the lost part will run again without your decision.`,
          'Show log',
        )
        .then((p) => p && log.show());
    }
  });
}
