// The approval webview's message protocol: one zod schema per message, shared by the extension
// host (src/views/approval/panel.ts) and the webview script (media/src/approval.ts). Every inbound
// message is parsed; anything that does not parse is rejected and logged, never acted on.
// No `vscode` import here: this file is bundled into the browser script too.
import { z } from 'zod';

const Id = z.string().min(1).max(200);
const RequestId = z.number().int().nonnegative();

// ── webview → host ─────────────────────────────────────────────────────────────────────────────
export const ReadyMessage = z.strictObject({ type: z.literal('ready') });

/** Every decision names the approval it decides *and* the input hash the user saw: a stale view cannot approve changed arguments. */
const DecisionBase = { requestId: RequestId, runId: Id, toolCallId: Id, inputHash: z.string().regex(/^[0-9a-f]{64}$/) };

export const ApproveMessage = z.strictObject({ type: z.literal('approve'), ...DecisionBase });
export const RejectMessage = z.strictObject({ type: z.literal('reject'), ...DecisionBase, reason: z.string().max(2000) });
export const ApproveEditedMessage = z.strictObject({
  type: z.literal('approveEdited'),
  ...DecisionBase,
  /** The edited arguments as JSON text; the host parses and validates them against the tool's schema. */
  argumentsJson: z.string().max(1_000_000),
});
export const ApproveAllMessage = z.strictObject({
  type: z.literal('approveAll'),
  requestId: RequestId,
  runId: Id,
  items: z.array(z.strictObject({ toolCallId: Id, inputHash: DecisionBase.inputHash })).min(1).max(100),
});
export const ShowDiffMessage = z.strictObject({ type: z.literal('showDiff'), runId: Id, toolCallId: Id });

export const WebviewMessage = z.discriminatedUnion('type', [
  ReadyMessage,
  ApproveMessage,
  RejectMessage,
  ApproveEditedMessage,
  ApproveAllMessage,
  ShowDiffMessage,
]);
export type WebviewMessage = z.infer<typeof WebviewMessage>;

// ── host → webview ─────────────────────────────────────────────────────────────────────────────
export const ApprovalView = z.object({
  toolCallId: Id,
  toolName: z.string(),
  category: z.enum(['read', 'write', 'command', 'subagent']),
  /** Pretty-printed JSON of the arguments. */
  argumentsJson: z.string(),
  /** The exact command line for run_command. */
  command: z.string().nullable(),
  /** Target path for write_file / edit_file (a diff can be shown). */
  path: z.string().nullable(),
  inputHash: z.string(),
  /** The call may already have run (an effect intent without a result was found on resume). */
  uncertain: z.boolean(),
  reason: z.string(),
  step: z.number().int(),
});
export type ApprovalView = z.infer<typeof ApprovalView>;

export const StateMessage = z.object({
  type: z.literal('state'),
  run: z
    .object({ runId: Id, title: z.string(), state: z.string(), stateDetail: z.string().nullable(), step: z.number().int() })
    .nullable(),
  approvals: z.array(ApprovalView),
  /** Why nothing can be decided here (another window owns the run, restricted mode…), or null. */
  readOnly: z.string().nullable(),
});
export type StateMessage = z.infer<typeof StateMessage>;

export const ResultMessage = z.object({
  type: z.literal('result'),
  requestId: RequestId,
  ok: z.boolean(),
  error: z.string().nullable(),
});
export type ResultMessage = z.infer<typeof ResultMessage>;

export const HostMessage = z.discriminatedUnion('type', [StateMessage, ResultMessage]);
export type HostMessage = z.infer<typeof HostMessage>;

/** Parses an inbound webview message; the error text is for the log. */
export function parseWebviewMessage(raw: unknown): { ok: true; message: WebviewMessage } | { ok: false; error: string } {
  const r = WebviewMessage.safeParse(raw);
  if (r.success) return { ok: true, message: r.data };
  const type = typeof raw === 'object' && raw !== null && 'type' in raw ? String((raw as { type: unknown }).type).slice(0, 40) : typeof raw;
  return { ok: false, error: `rejected webview message (${type}): ${z.prettifyError(r.error).replace(/\n/g, '; ')}` };
}
