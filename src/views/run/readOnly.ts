// When the run view (and its approvals and composer) is read-only in this window, and why.
import * as vscode from 'vscode';
import type { CheckpointStore, OwnerInfo } from '../../store/api/types';

export function readOnlyReason(d: {
  store: CheckpointStore;
  isActive(runId: string): boolean;
  owner: OwnerInfo;
}): (runId: string) => Promise<string | null> {
  return async (runId) => {
    if (!vscode.workspace.isTrusted)
      return 'Restricted mode: this workspace is not trusted, so write and command tools are disabled. Trust the workspace to decide.';
    if (d.isActive(runId)) return null;
    const holder = await d.store.owner(runId);
    return holder && holder.owner_id !== d.owner.owner_id
      ? `Read-only: this run is held by ${holder.label} (pid ${holder.pid}).`
      : null;
  };
}
