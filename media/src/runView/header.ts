// The run view's header (title, state, model, step, context meter, tokens and cost, actions) and
// the banners under it (notices, why the run stopped, read-only, Approve all), from the host's state.
import type { RunHeader, StateMessage } from '../../../src/views/run/protocol';
import { count } from '../../../src/common/format';
import { badge, button, el, icon } from './dom';
import type { Actions } from './toolCard';

export interface HeaderActions {
  run: Actions['run'];
  approveAll(runId: string, items: RunHeader['pendingCalls']): Promise<unknown>;
  showError(err: Error): void;
}

export function renderHeader(header: HTMLElement, banner: HTMLElement, s: StateMessage, a: HeaderActions): void {
  const run = s.runs[s.runs.length - 1]!;
  const first = s.runs[0]!;
  const title = el('h1', {}, first.title);
  const meta = el('div', { class: 'meta' });
  meta.append(
    badge(run.stateLabel, `state state-${run.state}`),
    el('span', {}, run.model),
    el('span', {}, `step ${run.step}`),
  );
  if (run.context) meta.append(contextMeter(run.context));
  meta.append(ledger(run, s.runs));
  if (run.budget) meta.append(el('span', { title: 'Budget of this run' }, `budget ${run.budget}`));
  if (s.approvalMode) {
    const mode = el('span', { class: 'approval-mode', title: s.approvalMode.detail });
    mode.append(icon(s.approvalMode.label.includes('in sandbox') ? 'shield' : 'terminal'), ` ${s.approvalMode.label}`);
    meta.append(mode);
  }
  if (s.runs.length > 1) meta.append(el('span', {}, `${s.runs.length} turns`));
  const bar = el('div', { class: 'run-actions' });
  for (const action of run.actions) bar.append(actionButton(run, action, a));
  const titles = el('div', { class: 'titles' });
  titles.append(title, meta);
  header.replaceChildren(titles, bar);
  banner.querySelectorAll(':scope > :not(.error)').forEach((n) => n.remove()); // errors go away by themselves
  const notes: HTMLElement[] = run.notices.map((n) => el('p', { class: 'notice', role: 'note' }, n));
  if (run.detail) notes.push(el('p', { class: 'detail' }, run.detail));
  if (s.readOnly) notes.push(el('p', { class: 'readonly', role: 'status' }, s.readOnly));
  const pending = run.pendingCalls;
  if (pending.length > 1 && !s.readOnly) {
    const all = button(`Approve all ${pending.length}`, 'check-all', () => {
      all.setAttribute('disabled', '');
      a.approveAll(run.runId, pending).catch((e: Error) => (all.removeAttribute('disabled'), a.showError(e)));
    });
    all.classList.add('approve-all');
    notes.push(all);
  }
  banner.prepend(...notes);
}

/** "context: 41% of 128k" with a bar; the exact figures in its tooltip. */
function contextMeter(c: NonNullable<RunHeader['context']>): HTMLElement {
  const pct = Math.min(100, Math.round((100 * c.tokens) / c.window));
  const meter = el('span', {
    class: `context-meter${pct >= 80 ? ' high' : ''}`,
    title: `The last request: ${count(c.tokens)} of ${count(c.window)} tokens${c.estimated ? " (estimated: not the model's own tokenizer)" : ''}. Older turns are condensed past the threshold; the run keeps the whole history.`,
  });
  const bar = el('span', { class: 'bar' });
  const fill = el('span', { class: 'fill' });
  fill.style.width = `${pct}%`;
  bar.append(fill);
  meter.append(el('span', {}, c.label), bar);
  return meter;
}

/** Tokens and cost of this run, and of the whole thread when it has several turns; "estimated" where counted by us. */
function ledger(run: RunHeader, runs: readonly RunHeader[]): HTMLElement {
  const u = run.usage;
  const parts = [`${count(run.tokens)} tokens`];
  const detail = [
    `prompt ${count(u.prompt)}`,
    ...(u.cached !== null ? [`cached ${count(u.cached)}`] : []),
    `completion ${count(u.completion)}`,
    ...(u.reasoning !== null ? [`reasoning ${count(u.reasoning)}`] : []),
  ];
  parts.push(run.costUsd === null ? 'cost unknown' : `$${run.costUsd.toFixed(4)}`);
  if (runs.length > 1) {
    const tokens = runs.reduce((n, r) => n + r.tokens, 0);
    const cost = runs.some((r) => r.costUsd === null) ? null : runs.reduce((n, r) => n + (r.costUsd ?? 0), 0);
    parts.push(`thread ${count(tokens)} tokens, ${cost === null ? 'cost unknown' : `$${cost.toFixed(4)}`}`);
  }
  const estimated = runs.some((r) => r.usage.estimated);
  return el(
    'span',
    {
      class: 'ledger',
      title: `This run: ${detail.join(' · ')}${estimated ? ' (estimated: the provider reported no usage)' : ''}`,
    },
    `${parts.join(' · ')}${estimated ? ' (estimated)' : ''}`,
  );
}

const ACTION_LABELS = {
  cancel: ['Cancel', 'debug-stop'],
  resume: ['Resume', 'debug-continue'],
  continueInBackground: ['Continue in background', 'cloud-upload'],
  bringBack: ['Bring back here', 'cloud-download'],
  fork: ['Fork', 'repo-forked'],
  export: ['Export', 'export'],
  openInTree: ['Open in tree', 'list-tree'],
} as const;

function actionButton(run: RunHeader, action: RunHeader['actions'][number], a: HeaderActions): HTMLElement {
  const [label, iconName] = ACTION_LABELS[action];
  return button(label, iconName, () => a.run(run.runId, action), {
    secondary: action !== 'resume' && action !== 'cancel',
  });
}
