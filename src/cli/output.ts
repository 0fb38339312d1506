// What the command line prints: compact aligned text for a person, or `--json` for scripts (one
// JSON document on stdout, fields chosen here so they stay stable whatever the store adds), and
// the exit code that says what state a run stopped in.
import { describeDecider } from '../runner/decider';
import type { Approval, RunState, RunSummary } from '../store/api/schema';
import type { OwnerInfo } from '../store/api/types';

/** Exit codes: what state the run is in when the command returns. */
export const Exit = {
  finished: 0,
  error: 1,
  waiting: 2,
  paused: 3,
  failed: 4,
  heldElsewhere: 5,
} as const;

export function exitFor(state: RunState): number {
  switch (state) {
    case 'completed':
      return Exit.finished;
    case 'awaiting_approval':
      return Exit.waiting;
    case 'failed':
      return Exit.failed;
    default:
      return Exit.paused;
  }
}

export interface RunJson {
  run_id: string;
  title: string;
  state: RunState;
  detail: string | null;
  step: number;
  pending_approvals: number;
  model: string;
  updated_ms: number;
}

export function runJson(r: RunSummary): RunJson {
  return {
    run_id: r.run_id,
    title: r.title,
    state: r.state,
    detail: r.state_detail,
    step: r.step,
    pending_approvals: r.pending_approvals,
    model: r.model,
    updated_ms: r.updated_ms,
  };
}

export interface CallJson {
  tool_call_id: string;
  step: number;
  tool: string;
  arguments: unknown;
  input_hash: string;
  /** waiting · approved · rejected · ran · failed · running (started, no result yet). */
  status: string;
  reason: string | null;
  decided_by: { user: string; host: string; via: string } | null;
  /** A command the sandbox blocked, waiting to run again: what it was refused. */
  sandbox_blocked?: { domains: string[]; writes: string[]; unix_sockets: boolean; process_limit: boolean };
}

export function approvalJson(a: Approval): CallJson {
  const d = a.decision;
  return {
    tool_call_id: a.tool_call_id,
    step: a.step,
    tool: a.tool_name,
    arguments: d?.kind === 'approve_edited' ? d.arguments : a.arguments,
    input_hash: a.input_hash,
    status: !d ? 'waiting' : d.kind === 'reject' ? 'rejected' : 'approved',
    reason: d ? d.reason : a.reason,
    decided_by: d?.by ? { user: d.by.user, host: d.by.host, via: d.by.via } : null,
    ...(a.retry ? { sandbox_blocked: a.retry.blocked } : {}),
  };
}

export function holderJson(o: OwnerInfo | undefined): { label: string; pid: number; hostname: string } | null {
  return o ? { label: o.label, pid: o.pid, hostname: o.hostname } : null;
}

/** Rows as columns padded to the widest cell; the last column is left as is. */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

export function runsTable(runs: RunSummary[]): string {
  if (runs.length === 0) return 'No runs.';
  const head = ['RUN', 'STATE', 'STEP', 'WAITING', 'UPDATED', 'TITLE'];
  return table([
    head,
    ...runs.map((r) => [
      r.run_id,
      r.state,
      String(r.step),
      r.pending_approvals ? String(r.pending_approvals) : '-',
      when(r.updated_ms),
      r.title,
    ]),
  ]);
}

/** A call in one line: its tool and a short form of its arguments (a command as it reads). */
export function callLine(tool: string, args: unknown, max = 100): string {
  const a = args as Record<string, unknown> | null;
  const shown =
    a && typeof a === 'object' && typeof a.command === 'string'
      ? a.command
      : a && typeof a === 'object' && typeof a.path === 'string'
        ? a.path
        : JSON.stringify(args ?? null);
  const flat = shown.replace(/\s+/g, ' ');
  return `${tool} ${flat.length > max ? `${flat.slice(0, max - 1)}…` : flat}`;
}

export function decidedText(c: CallJson): string {
  if (!c.decided_by) return '';
  return `by ${describeDecider({ user: c.decided_by.user, host: c.decided_by.host, via: c.decided_by.via as 'cli' | 'window' })}`;
}

export function pendingText(runId: string, pending: CallJson[]): string {
  const rows = pending.map((c) => [`  ${c.tool_call_id}`, callLine(c.tool, c.arguments), c.reason ?? '']);
  return [
    `Waiting for approval (${pending.length}):`,
    table(rows),
    `Approve: agent-waypoints approve ${runId} <call>|--all   Reject: agent-waypoints reject ${runId} <call> --reason "…"`,
    ...(pending.some((c) => c.sandbox_blocked)
      ? [
          'A command the sandbox blocked runs again with --allow-domains (the domains it was refused, for the rest of the run) or --outside-sandbox (this once).',
        ]
      : []),
  ].join('\n');
}

export function when(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
}
