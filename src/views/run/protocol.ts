// The run view's one webview protocol: typed request/response pairs (GitLens's IpcRequest<Params,
// Result>) and host notifications, a zod schema for each. The host parses what the webview sends,
// and rejects and logs anything that does not parse; nothing executes without a matching pending
// approval (the runner re-checks tool_call_id and input_hash before writing a decision). The
// webview takes its host's messages as typed (it imports only this file's types: zod stays out of
// its bundle); the unit tests check every host message against these schemas on its way in
// (test/unit/views/run/webviewDom.ts). No `vscode` import.
import * as z from 'zod';
import { OutlineEntry, RESTORE_ACTIONS, RUN_ACTIONS, TranscriptItem, WAYPOINT_ACTIONS } from './items';
import { RichResult } from './richResult';

const Id = z.string().min(1).max(200);
const InputHash = z.string().regex(/^[0-9a-f]{64}$/);
const Ok = z.object({});

function request<P extends z.ZodType, R extends z.ZodType>(params: P, result: R) {
  return { params, result };
}

/** Every request the webview can make, with its params and its result. */
export const Requests = {
  /** Items [from, to) of the thread's transcript (the view renders what is visible and pages on scroll). */
  page: request(
    z.strictObject({ from: z.number().int().nonnegative(), to: z.number().int().nonnegative() }),
    z.object({ version: z.number().int(), from: z.number().int(), items: z.array(TranscriptItem) }),
  ),
  /** Decisions name the approval *and* the input hash the user saw: a stale view cannot approve changed arguments. */
  approve: request(z.strictObject({ runId: Id, toolCallId: Id, inputHash: InputHash }), Ok),
  reject: request(
    z.strictObject({ runId: Id, toolCallId: Id, inputHash: InputHash, reason: z.string().max(2000) }),
    Ok,
  ),
  /**
   * A command the sandbox blocked, on its retry approval: run it again with its refused domains for
   * this run, always (the user's setting too), or once outside the sandbox. Deny is `reject`.
   */
  retry: request(
    z.strictObject({
      runId: Id,
      toolCallId: Id,
      inputHash: InputHash,
      choice: z.enum(['allowForRun', 'allowAlways', 'runOutside']),
    }),
    Ok,
  ),
  /** The edited arguments as JSON text; the host parses and validates them against the tool's schema. */
  approveEdited: request(
    z.strictObject({ runId: Id, toolCallId: Id, inputHash: InputHash, argumentsJson: z.string().max(1_000_000) }),
    Ok,
  ),
  approveAll: request(
    z.strictObject({
      runId: Id,
      items: z
        .array(z.strictObject({ toolCallId: Id, inputHash: InputHash }))
        .min(1)
        .max(100),
    }),
    Ok,
  ),
  /** VS Code's diff editor beside the view: the file against the proposed edit (pending) or the edit itself (done). */
  showDiff: request(z.strictObject({ runId: Id, toolCallId: Id }), Ok),
  /**
   * "Always allow" on an external tool's pending approval: approves this call and adds the tool to
   * the always-allow list. Server and tool are read from the approval, never from the view.
   */
  alwaysAllow: request(z.strictObject({ runId: Id, toolCallId: Id, inputHash: InputHash }), Ok),
  /** An external tool's exact result (text, images, resources, structured content), as kept with the run. */
  toolResult: request(z.strictObject({ runId: Id, toolCallId: Id }), RichResult),
  /** The whole result of a tool call (the item carries a preview). */
  toolOutput: request(z.strictObject({ runId: Id, toolCallId: Id }), z.object({ text: z.string() })),
  runAction: request(z.strictObject({ runId: Id, action: z.enum(RUN_ACTIONS) }), Ok),
  /** The host checks the checkpoint is the run's, and for restoreFiles that the run can be written and has file changes after it. */
  waypointAction: request(
    z.strictObject({ runId: Id, seq: z.number().int().positive(), action: z.enum(WAYPOINT_ACTIONS) }),
    Ok,
  ),
  /** A restore card names its record; what to undo or open is read from the store, never taken from the view. */
  restoreAction: request(z.strictObject({ runId: Id, restoreId: Id, action: z.enum(RESTORE_ACTIONS) }), Ok),
  /** A "condensed here" marker's Undo condense: the host checks it is the run's current condense and the run is stopped. */
  condenseAction: request(z.strictObject({ runId: Id, condenseId: Id, action: z.enum(['undo']) }), Ok),
  /** The composer: a message to the thread's latest run (queued while it works, else a follow-up turn). */
  send: request(
    z.strictObject({ runId: Id, text: z.string().trim().min(1).max(100_000), clientId: Id }),
    z.object({ kind: z.enum(['queued', 'follow-up']), runId: Id, when: z.string().nullable() }),
  ),
} as const;
export type Requests = typeof Requests;
export type Method = keyof Requests;
export type Params<M extends Method> = z.infer<Requests[M]['params']>;
export type Result<M extends Method> = z.infer<Requests[M]['result']>;

// ── webview → host ─────────────────────────────────────────────────────────────────────────────
const RequestId = z.number().int().nonnegative();
const requestEnvelopes = (Object.keys(Requests) as Method[]).map((method) =>
  z.strictObject({
    type: z.literal('request'),
    id: RequestId,
    method: z.literal(method),
    params: Requests[method].params,
  }),
);
/**
 * `ready`: the view's script listens (send it what was read). `painted`: it has drawn the first
 * state it was sent (the host reads the rest of a long thread after that, not beside the view's
 * first frame).
 */
export const WebviewMessage = z.union([
  z.strictObject({ type: z.literal('ready') }),
  z.strictObject({ type: z.literal('painted') }),
  ...requestEnvelopes,
]);
export type RequestMessage = { [M in Method]: { type: 'request'; id: number; method: M; params: Params<M> } }[Method];
export type WebviewMessage = { type: 'ready' } | { type: 'painted' } | RequestMessage;

/** Parses an inbound webview message; the error text is for the log. */
export function parseWebviewMessage(
  raw: unknown,
): { ok: true; message: WebviewMessage } | { ok: false; error: string } {
  const r = WebviewMessage.safeParse(raw);
  if (r.success) return { ok: true, message: r.data as WebviewMessage };
  const o = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : undefined;
  const what = String(o?.method ?? o?.type ?? typeof raw).slice(0, 40);
  return {
    ok: false,
    error: `rejected webview message (${what}): ${z.prettifyError(r.error).replace(/\n/g, '; ').slice(0, 500)}`,
  };
}

// ── host → webview ─────────────────────────────────────────────────────────────────────────────
export const RunHeader = z.object({
  runId: Id,
  title: z.string(),
  state: z.string(),
  stateLabel: z.string(),
  detail: z.string().nullable(),
  model: z.string(),
  step: z.number().int(),
  tokens: z.number().int(),
  /** null = unknown (a model without a price). */
  costUsd: z.number().nullable(),
  /** The last request's size against the model's window (the context meter); null before the first request. */
  context: z
    .object({
      tokens: z.number().int().nonnegative(),
      window: z.number().int().positive(),
      /** "context: 41% of 128k". */
      label: z.string(),
      estimated: z.boolean(),
    })
    .nullable(),
  /** The run's ledger totals (survive resume, fork, condense, reload: they are the latest snapshot's). */
  usage: z.object({
    prompt: z.number().int().nonnegative(),
    cached: z.number().int().nonnegative().nullable(),
    completion: z.number().int().nonnegative(),
    reasoning: z.number().int().nonnegative().nullable(),
    estimated: z.boolean(),
  }),
  /** "25 steps", "$0.50"…, or null when the run has no limit. */
  budget: z.string().nullable(),
  pendingApprovals: z.number().int(),
  /** The calls waiting for a decision (for Approve all). */
  pendingCalls: z.array(z.object({ toolCallId: Id, inputHash: InputHash })),
  actions: z.array(z.enum(RUN_ACTIONS)),
  /** Why the run's files cannot be restored now / Resume does not apply (actions/guards.ts), shown as is; null: they can. */
  whyNot: z.object({ restore: z.string().nullable(), resume: z.string().nullable() }),
  /** Said before anything else: what an import reset, a folder other than the one the run was recorded in. */
  notices: z.array(z.string()).max(10),
});

/** How commands are approved in this workspace: "commands: auto in sandbox · network: 2 domains", and why. */
export const ApprovalModeLine = z.object({ label: z.string().max(200), detail: z.string().max(2000) });
export type ApprovalModeLine = z.infer<typeof ApprovalModeLine>;
export type RunHeader = z.infer<typeof RunHeader>;

export const StateMessage = z.object({
  type: z.literal('state'),
  /** Grows with every change; a page of an older version is stale. */
  version: z.number().int(),
  threadId: z.string(),
  /** The run the view was opened for (kept by the webview across reloads). */
  focusRunId: z.string(),
  /** Every run (turn) of the thread, oldest first; the last one is the header's. */
  runs: z.array(RunHeader),
  outline: z.array(OutlineEntry),
  /** The outline holds only the thread's end (the first paint of a long thread): the rest follows. */
  partial: z.boolean(),
  /** Items to paint at once, so the first paint needs no page request: the thread's end. */
  page: z.object({ from: z.number().int().nonnegative(), items: z.array(TranscriptItem) }).nullable(),
  /** Why nothing can be decided or sent here (another window holds the run, restricted mode), or null. */
  readOnly: z.string().nullable(),
  /** What Send does now, for the composer's hint. */
  composerHint: z.string(),
  /** How commands are approved in this workspace now (the header says it); null where not known. */
  approvalMode: ApprovalModeLine.nullable(),
  /** The model call under way, whose text streams in `delta` messages; with the text (and reasoning) streamed so far, which replaces what the view has. */
  streaming: z
    .object({
      runId: z.string(),
      step: z.number().int(),
      text: z.string().optional(),
      reasoning: z.string().optional(),
    })
    .nullable(),
});
export type StateMessage = z.infer<typeof StateMessage>;

export const DeltaMessage = z.object({
  type: z.literal('delta'),
  runId: z.string(),
  step: z.number().int(),
  kind: z.enum(['text', 'reasoning']),
  text: z.string(),
});
export const RevealMessage = z.object({ type: z.literal('reveal'), key: z.string() });
export const ResponseMessage = z.union([
  z.object({ type: z.literal('response'), id: RequestId, ok: z.literal(true), result: z.unknown() }),
  z.object({ type: z.literal('response'), id: RequestId, ok: z.literal(false), error: z.string() }),
]);
export const HostMessage = z.union([StateMessage, DeltaMessage, RevealMessage, ResponseMessage]);
export type HostMessage = z.infer<typeof HostMessage>;
