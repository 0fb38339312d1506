// A tool call as a collapsible card: arguments, the edit as a unified diff, the result (a preview
// with "Show all"), exit code and duration, replayed / may-already-have-run badges, and — while it
// waits — the approval in place: Approve, Reject… (reason), Edit arguments…, Show diff.
import type { ToolItem } from '../../../src/views/run/items';
import type { Method, Params, RunHeader } from '../../../src/views/run/protocol';
import type { RestoreAction, RunAction, WaypointAction } from '../../../src/views/run/items';
import type { RichResult } from '../../../src/views/run/richResult';
import { count } from '../../../src/common/format';
import { badge, button, el, icon, reasonOf, renderNote } from './dom';
import { setCode } from './markdown';
import { richBlock } from './richResult';

export interface Actions {
  /** Sends a decision; the card is disabled until the host answers (errors are shown in it). */
  decide<M extends Extract<Method, 'approve' | 'reject' | 'approveEdited' | 'alwaysAllow' | 'retry'>>(
    card: HTMLElement,
    method: M,
    params: Params<M>,
  ): void;
  showDiff(runId: string, toolCallId: string): void;
  toolOutput(runId: string, toolCallId: string): Promise<string>;
  /** An external tool's exact result (images, resources, structured content). */
  toolResult(runId: string, toolCallId: string): Promise<RichResult>;
  run(runId: string, action: RunAction): void;
  waypoint(runId: string, seq: number, action: WaypointAction): void;
  restore(runId: string, restoreId: string, action: RestoreAction): void;
  /** Undo condense on a "condensed here" marker. */
  condense(runId: string, condenseId: string): void;
  readOnly(): boolean;
  /** Why the run's files cannot be restored / Resume does not apply now, as the host's guards say (null: they can). */
  whyNot(runId: string): RunHeader['whyNot'];
  /** Cards the user opened or closed keep that across re-renders. */
  expanded: Map<string, boolean>;
}

/** A diff is coloured line by line, which is cheap: up to this. */
const DIFF_HIGHLIGHT_MAX_CHARS = 200_000;

const ICONS: Record<string, string> = {
  read_file: 'file',
  list_files: 'list-tree',
  search_text: 'search',
  write_file: 'new-file',
  edit_file: 'edit',
  run_command: 'terminal',
  delegate: 'organization',
};
const STATUS: Record<ToolItem['status'], [string, string]> = {
  done: ['check', 'done'],
  error: ['error', 'failed'],
  running: ['loading codicon-modifier-spin', 'running'],
  waiting: ['clock', 'waiting'],
  awaiting: ['bell-dot', 'waiting for approval'],
  rejected: ['circle-slash', 'rejected'],
  interrupted: ['debug-disconnect', 'interrupted'],
  'not-run': ['circle-outline', 'not run'],
};

/** The card's element, as the view's code and its tests find it (a card drawn as plain text too). */
export function cardShell(t: ToolItem): HTMLElement {
  const pending = t.approval?.pending === true;
  const root = el('section', {
    class: `tool status-${t.status}${pending ? ' approval' : ''}`,
    'data-run-id': t.runId,
    'data-tool-call-id': t.toolCallId,
  });
  if (t.approval) root.setAttribute('data-input-hash', t.approval.inputHash);
  return root;
}

export function toolCard(t: ToolItem, a: Actions): HTMLElement {
  const pending = t.approval?.pending === true;
  const root = cardShell(t);
  const open = a.expanded.get(t.key) ?? (pending || t.status === 'running');
  const details = el('details', open ? { open: '' } : {});
  details.addEventListener('toggle', () => a.expanded.set(t.key, (details as HTMLDetailsElement).open));
  const summary = el('summary', { class: 'head' });
  const [statusIcon, statusText] = STATUS[t.status];
  summary.append(icon(ICONS[t.name] ?? (t.external ? 'plug' : 'tools')), el('span', { class: 'title' }, t.title));
  if (t.replayed)
    summary.append(
      badge('replayed', 'info', 'Its recorded result was replayed from the effect journal; it did not run again'),
    );
  if (t.uncertain)
    summary.append(badge('may already have run', 'warn', 'The window closed while this call was running'));
  if (t.exitCode !== null) summary.append(badge(`exit ${t.exitCode}`, t.exitCode === 0 ? 'ok' : 'warn'));
  if (t.durationMs !== null) summary.append(el('span', { class: 'duration' }, formatMs(t.durationMs)));
  if (t.approval?.decision && t.approval.decision !== 'approved')
    summary.append(badge(t.approval.decision, t.approval.decision === 'rejected' ? 'warn' : 'info'));
  const status = el('span', { class: 'state', title: statusText });
  status.append(icon(statusIcon), el('span', {}, statusText));
  summary.append(status);
  details.append(
    summary,
    body(t, a, () => root),
  );
  root.append(details);
  return root;
}

/** Each part drawn on its own: one that fails is a note, and the rest — the decision above all — is still there. */
function body(t: ToolItem, a: Actions, card: () => HTMLElement): HTMLElement {
  const b = el('div', { class: 'body' });
  const part = (what: string, make: () => HTMLElement[]) => {
    try {
      b.append(...make());
    } catch (err) {
      b.append(renderNote(`The ${what} could not be rendered: ${reasonOf(err)}`));
    }
  };
  if (t.uncertain && t.approval?.pending) {
    const warn = el('p', { class: 'warning', role: 'alert' });
    warn.append(
      icon('warning'),
      document.createTextNode(
        ' May already have run: the window closed while this call was executing. Approve only if running it again is safe.',
      ),
    );
    b.append(warn);
  }
  if (t.approval?.pending) b.append(el('p', { class: 'reason' }, t.approval.reason));
  if (t.approval?.decisionReason) b.append(el('p', { class: 'reason' }, `Reason: ${t.approval.decisionReason}`));
  if (t.approval?.decidedBy) b.append(el('p', { class: 'decided-by' }, t.approval.decidedBy));
  const command = t.name === 'run_command' ? t.args.find((x) => x.name === 'command') : undefined;
  if (command)
    part('command', () => [el('div', { class: 'label' }, 'Command'), el('pre', { class: 'command' }, command.value)]);
  if (t.diff) part('change', () => [el('div', { class: 'label' }, 'Change'), diffBlock(t.diff!)]);
  part('arguments', () =>
    t.args
      .filter((arg) => arg !== command && !(t.diff && ['old_text', 'new_text', 'content'].includes(arg.name)))
      .flatMap((arg) => [
        el('div', { class: 'label' }, arg.name.replace(/_/g, ' ')),
        el('pre', { class: 'args' }, arg.value),
      ]),
  );
  if (t.progress !== null) b.append(el('p', { class: 'progress', role: 'status' }, `Progress: ${t.progress}`));
  if (t.sandbox !== null) b.append(sandboxLine(t.sandbox));
  if (t.approval?.pending && t.approval.retry && !a.readOnly()) b.append(...retryControls(t, a, card));
  else if (t.approval?.pending && !a.readOnly()) b.append(...approvalControls(t, a, card));
  else if (t.diff) {
    const row = el('div', { class: 'actions' });
    row.append(button('Open diff', 'diff', () => a.showDiff(t.runId, t.toolCallId), { secondary: true }));
    b.append(row);
  }
  if (t.output !== null) part('result', () => outputBlock(t, a));
  if (t.changedFilesTotal > 0) part('changed files', () => changedFiles(t));
  if (t.rich) part('result as the tool returned it', () => [richBlock(t, a)]);
  return b;
}

/** `card`: the card's element, disabled while its decision is on the way. */
export function approvalControls(t: ToolItem, a: Actions, card: () => HTMLElement): HTMLElement[] {
  const base = { runId: t.runId, toolCallId: t.toolCallId, inputHash: t.approval!.inputHash };
  const actions = el('div', { class: 'actions' });
  actions.append(button('Approve', 'check', () => a.decide(card(), 'approve', base)));
  const rejectBox = el('div', { class: 'reject hidden' });
  const reason = el('vscode-textarea', {
    placeholder: 'Why? The model sees this reason.',
    rows: '2',
  }) as HTMLElement & { value: string };
  rejectBox.append(
    reason,
    button('Reject with reason', 'close', () =>
      a.decide(card(), 'reject', { ...base, reason: reason.value || 'Rejected by the user.' }),
    ),
  );
  actions.append(button('Reject…', 'close', () => rejectBox.classList.toggle('hidden'), { secondary: true }));
  const editBox = el('div', { class: 'edit hidden' });
  if (t.argumentsEditable) {
    const editor = el('vscode-textarea', {
      rows: '8',
      monospace: '',
      'aria-label': 'Edited arguments (JSON)',
    }) as HTMLElement & { value: string };
    editor.value = t.argumentsJson;
    editBox.append(
      editor,
      button('Approve edited', 'check', () =>
        a.decide(card(), 'approveEdited', { ...base, argumentsJson: editor.value }),
      ),
    );
  } else
    editBox.append(
      el(
        'p',
        { class: 'reason' },
        'These arguments are too long to edit here: approve them as they are, or reject them with a reason.',
      ),
    );
  actions.append(button('Edit arguments…', 'edit', () => editBox.classList.toggle('hidden'), { secondary: true }));
  if (t.diff) actions.append(button('Show diff', 'diff', () => a.showDiff(t.runId, t.toolCallId), { secondary: true }));
  if (t.external && !t.uncertain)
    actions.append(
      button('Always allow', 'pass', () => a.decide(card(), 'alwaysAllow', base), {
        secondary: true,
        title: 'Approve, and run this tool of this server without asking from now on (revocable in the Runs view)',
      }),
    );
  return [actions, rejectBox, editBox, el('p', { class: 'error hidden', role: 'alert' })];
}

/** Where a command ran: in the sandbox (its profile in a line) or outside it, and why. */
function sandboxLine(text: string): HTMLElement {
  const p = el('p', { class: 'sandbox' });
  p.append(icon(text.startsWith('Ran in the sandbox') ? 'shield' : 'unlock'), document.createTextNode(` ${text}`));
  return p;
}

/**
 * A command the sandbox blocked, waiting: "`npm install` wanted registry.npmjs.org" and its
 * answers — Allow for this run / Always (the domains), Run outside the sandbox once, Deny.
 */
export function retryControls(t: ToolItem, a: Actions, card: () => HTMLElement): HTMLElement[] {
  const r = t.approval!.retry!;
  const base = { runId: t.runId, toolCallId: t.toolCallId, inputHash: t.approval!.inputHash };
  const command = t.args.find((x) => x.name === 'command')?.value ?? t.title;
  const wanted = el('p', { class: 'wanted' });
  const what = [
    ...(r.domains.length > 0 ? [r.domains.join(', ')] : []),
    ...(r.writes.length > 0 ? [`to write ${r.writes.join(', ')}`] : []),
    ...(r.unixSockets ? ['a unix socket'] : []),
  ].join('; ');
  wanted.append(icon('shield'), ' ', el('code', {}, command.length > 40 ? `${command.slice(0, 39)}…` : command));
  wanted.append(document.createTextNode(` wanted ${what}`));
  const actions = el('div', { class: 'actions' });
  if (r.domains.length > 0) {
    actions.append(
      button('Allow for this run', 'check', () => a.decide(card(), 'retry', { ...base, choice: 'allowForRun' }), {
        title: `Run this command once more with ${r.domains.join(', ')} allowed; later commands of this run may reach them too`,
      }),
      button('Always', 'pass', () => a.decide(card(), 'retry', { ...base, choice: 'allowAlways' }), {
        secondary: true,
        title: 'Add the domains to your allowed domains (agentWaypoints.sandbox.allowedDomains) and run it once more',
      }),
    );
  }
  actions.append(
    button(
      'Run outside the sandbox once',
      'unlock',
      () => a.decide(card(), 'retry', { ...base, choice: 'runOutside' }),
      {
        secondary: true,
        title: 'Run this command once more without the sandbox: it can do anything you can',
      },
    ),
    button(
      'Deny',
      'close',
      () => a.decide(card(), 'reject', { ...base, reason: 'The user did not allow more access.' }),
      { secondary: true, title: 'The model gets the blocked result' },
    ),
  );
  return [wanted, actions, el('p', { class: 'error hidden', role: 'alert' })];
}

/** The files the call changed, as the file journal recorded them. */
function changedFiles(t: ToolItem): HTMLElement[] {
  const list = el('ul', { class: 'changed-files' });
  for (const f of t.changedFiles) list.append(el('li', {}, f));
  const more = t.changedFilesTotal - t.changedFiles.length;
  if (more > 0) list.append(el('li', { class: 'more' }, `and ${count(more)} more`));
  return [el('div', { class: 'label' }, `Changed files (${count(t.changedFilesTotal)})`), list];
}

function outputBlock(t: ToolItem, a: Actions): HTMLElement[] {
  const pre = el('pre', { class: `output${t.status === 'error' ? ' error-output' : ''}` }, t.output ?? '');
  const out: HTMLElement[] = [el('div', { class: 'label' }, t.status === 'error' ? 'Error' : 'Result'), pre];
  if (t.outputChars > (t.output?.length ?? 0)) {
    const more = button(
      `Show all (${count(t.outputChars)} characters)`,
      'unfold',
      () => {
        more.setAttribute('disabled', '');
        a.toolOutput(t.runId, t.toolCallId).then(
          (text) => ((pre.textContent = text), more.remove()),
          (err: Error) => ((pre.textContent += `\n[${err.message}]`), more.removeAttribute('disabled')),
        );
      },
      { secondary: true },
    );
    out.push(more);
  }
  return out;
}

function diffBlock(lines: string[]): HTMLElement {
  const pre = el('pre', { class: 'diff' });
  const code = el('code');
  setCode(code, lines.join('\n'), 'diff', DIFF_HIGHLIGHT_MAX_CHARS);
  pre.append(code);
  return pre;
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}
