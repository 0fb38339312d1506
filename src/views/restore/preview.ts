// The restore preview: a list of every journaled file with what the restore will do and why, the
// writes ticked, conflicts unticked (tick to overwrite with the checkpoint version), files that
// cannot be changed shown but not tickable, and what the journal could not know. Each file can be
// compared (VS Code's diff editor: the file now ↔ the version the restore would write).
import * as vscode from 'vscode';
import { defaultTicks, OUTSIDE_WORKSPACE, type PlannedFile, type RestorePlan } from '../../actions/restore/plan';
import type { FileVersion } from '../../store/api/schema';

export const VERSION_SCHEME = 'agent-waypoints-version';

const ICONS: Record<PlannedFile['action'], string> = {
  revert: 'discard',
  partial: 'discard',
  conflict: 'warning',
  unrestorable: 'circle-slash',
  unchanged: 'check',
  refused: 'error',
};
const WHAT: Record<PlannedFile['action'], string> = {
  revert: 'will be restored',
  partial: 'will be restored partly',
  conflict: 'kept',
  unrestorable: 'cannot be restored',
  unchanged: 'already as at the checkpoint',
  refused: OUTSIDE_WORKSPACE,
};

interface Item extends vscode.QuickPickItem {
  file?: PlannedFile;
  /** Can be ticked: a default write, or a conflict that may be overwritten. */
  tickable: boolean;
}

const COMPARE: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('diff'),
  tooltip: 'Compare: the file now ↔ what the restore would write',
};

/** A virtual document of a journaled version (text, or a line saying it is binary), for the diff editor. */
export class VersionDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly registration: vscode.Disposable;
  constructor(private readonly blob: (runId: string, hash: string) => Promise<string>) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(VERSION_SCHEME, this);
  }

  uri(runId: string, rel: string, v: FileVersion): vscode.Uri {
    const id = v.kind === 'file' ? `${v.blob ?? 'none'}.${v.encoding}` : v.kind;
    return vscode.Uri.from({ scheme: VERSION_SCHEME, path: `/${rel}`, query: `${runId}/${id}` });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const [runId, id] = uri.query.split('/');
    const [hash, encoding] = (id ?? '').split('.');
    if (!runId || !hash || hash === 'absent' || hash === 'unknown') return '';
    if (hash === 'none') return '(this version was too large to keep)';
    const text = await this.blob(runId, hash);
    return encoding === 'base64'
      ? `(binary file, ${Buffer.from(text, 'base64').length.toLocaleString('en')} bytes: not shown)`
      : text;
  }

  dispose(): void {
    this.registration.dispose();
  }
}

export interface PreviewOptions {
  runId: string;
  title: string;
  workspaceRoot: vscode.Uri;
  versions: VersionDocuments;
}

/** Shows the preview; resolves to the ticked paths, or undefined when dismissed. */
export function previewRestore(plan: RestorePlan, o: PreviewOptions): Promise<Set<string> | undefined> {
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = o.title;
  qp.canSelectMany = true;
  qp.ignoreFocusOut = true;
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  const writes = plan.files.filter((f) => f.action === 'revert' || f.action === 'partial').length;
  const kept = plan.files.length - writes;
  qp.placeholder =
    plan.files.length === 0
      ? 'The agent changed no files after this checkpoint.'
      : `${writes} file${writes === 1 ? '' : 's'} to restore, ${kept} kept — press Enter to restore the ticked files`;
  qp.items = items(plan);
  const ticks = defaultTicks(plan);
  qp.selectedItems = qp.items.filter((i) => i.file && ticks.has(i.file.path));
  return new Promise((resolve) => {
    let done = false;
    const finish = (v: Set<string> | undefined) => {
      if (done) return;
      done = true;
      resolve(v);
      qp.dispose();
    };
    qp.onDidChangeSelection((sel) => {
      // Files that cannot change are listed, not tickable.
      if (sel.some((i) => !i.tickable)) qp.selectedItems = sel.filter((i) => i.tickable);
    });
    qp.onDidTriggerItemButton((e) => void compare(e.item.file!, o));
    qp.onDidAccept(() =>
      finish(new Set(qp.selectedItems.filter((i) => i.tickable && i.file).map((i) => i.file!.path))),
    );
    qp.onDidHide(() => finish(undefined));
    qp.show();
  });
}

function items(plan: RestorePlan): Item[] {
  const out: Item[] = [];
  const group = (label: string, files: PlannedFile[]) => {
    if (files.length === 0) return;
    out.push({ label, kind: vscode.QuickPickItemKind.Separator, tickable: false });
    for (const f of files) {
      const tickable = f.action === 'revert' || f.action === 'partial' || f.overwritable;
      const what = f.overwritable
        ? `${WHAT[f.action]} — tick to overwrite with the checkpoint version`
        : WHAT[f.action];
      out.push({
        file: f,
        tickable,
        label: `$(${ICONS[f.action]}) ${f.path}`,
        description: what,
        detail: f.reason,
        buttons: f.action === 'refused' ? [] : [COMPARE],
      });
    }
  };
  group(
    'Will be restored',
    plan.files.filter((f) => f.action === 'revert' || f.action === 'partial'),
  );
  group(
    'Kept: changed since the agent wrote them',
    plan.files.filter((f) => f.action === 'conflict'),
  );
  group(
    'Cannot be restored',
    plan.files.filter((f) => f.action === 'unrestorable'),
  );
  group(
    'Already as at the checkpoint',
    plan.files.filter((f) => f.action === 'unchanged'),
  );
  group(
    'Outside the workspace — not restored',
    plan.files.filter((f) => f.action === 'refused'),
  );
  if (plan.notes.length > 0) {
    out.push({ label: 'Not known to the journal', kind: vscode.QuickPickItemKind.Separator, tickable: false });
    for (const n of plan.notes) out.push({ label: `$(info) ${n}`, tickable: false });
  }
  return out;
}

async function compare(f: PlannedFile, o: PreviewOptions): Promise<void> {
  const target = f.target ?? f.checkpoint;
  const left =
    f.current.kind === 'absent'
      ? o.versions.uri(o.runId, f.path, { kind: 'absent' })
      : vscode.Uri.joinPath(o.workspaceRoot, ...f.path.split('/'));
  const right = o.versions.uri(o.runId, f.path, target);
  const side = f.target ? 'restored' : 'checkpoint version';
  await vscode.commands.executeCommand('vscode.diff', left, right, `${f.path} (now) ↔ ${side}`, {
    preview: true,
    preserveFocus: true,
  });
}
