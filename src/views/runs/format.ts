// Text for the tree and quick picks: relative times, state and phase names, payload summaries.
import type { CheckpointRecord, Phase, RunState, RunSummary } from '../../store/api/schema';
import { escapeMarkdown } from '../shared/markdown';
import { STATE_LABELS } from '../shared/runs';

export function relativeTime(ms: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m ago`;
  const h = Math.round(m / 60);
  if (h < 36) return `${h}h ago`;
  return `${Math.round(h / 24)}d ago`;
}

/** Codicon ids (available in VS Code 1.90). */
export const STATE_ICONS: Record<RunState, string> = {
  running: 'sync~spin',
  awaiting_approval: 'bell-dot',
  paused_budget: 'debug-pause',
  paused_error: 'warning',
  paused_cancelled: 'circle-slash',
  interrupted: 'debug-disconnect',
  completed: 'pass',
  failed: 'error',
};

export const PHASE_ICONS: Record<Phase, string> = {
  run_started: 'rocket',
  step_started: 'debug-step-into',
  pre_llm: 'send',
  post_llm: 'hubot',
  pre_tool_batch: 'tools',
  post_tool_batch: 'check-all',
  pre_subagent_batch: 'organization',
  post_subagent_batch: 'organization',
  pre_condense: 'fold',
  post_condense: 'fold-up',
  run_terminal: 'flag',
};

/** 1536 → "1.5 KB"; binary units, as the file explorer shows them. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}`;
}

export function runDescription(run: RunSummary, now = Date.now()): string {
  const parts = [STATE_LABELS[run.state], `step ${run.step}`];
  if (run.pending_approvals > 0) parts.push(`${run.pending_approvals} to approve`);
  parts.push(relativeTime(run.updated_ms, now));
  return parts.join(' · ');
}

/** A few lines of Markdown describing a checkpoint, for tooltips. */
export function checkpointSummary(r: CheckpointRecord): string {
  const lines = [`**${r.phase}** · seq ${r.seq} · step ${r.step}`, '', new Date(r.timestamp_ms).toLocaleString(), ''];
  for (const [k, v] of Object.entries(r.payload)) {
    if (k === 'terminal_result') continue;
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    lines.push(`- \`${k}\`: ${escapeMarkdown(text.length > 120 ? `${text.slice(0, 117)}…` : text)}`);
  }
  if (r.snapshot) {
    const s = r.snapshot;
    const cost = s.total_cost_usd === null ? 'unknown' : `$${s.total_cost_usd.toFixed(4)}`;
    lines.push(
      `- snapshot: ${s.message_count} messages, ${s.llm_calls} LLM calls, ${s.tool_calls} tool calls, ${s.usage.total_tokens} tokens, cost ${cost}`,
    );
    if (s.pending_llm_response)
      lines.push(`- pending LLM response with ${s.pending_llm_response.message.tool_calls?.length ?? 0} tool call(s)`);
  }
  return lines.join('\n');
}
