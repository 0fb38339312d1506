// The two deadlines of one MCP call, kept here rather than by the SDK so that a timeout is reported
// only when it is the truth: an idle one that each progress notification starts again, and a total
// one that nothing extends. Either aborts the call's signal, which makes the SDK send
// notifications/cancelled to the server; the user's cancel does the same.
import type { McpError } from '@modelcontextprotocol/sdk/types.js';

export type Expired = 'idle' | 'total';

/** The reason the call's signal is aborted with; the SDK sends String(reason) to the server. */
class DeadlineReason extends Error {
  override toString(): string {
    return this.message;
  }
}

export class CallDeadline {
  private readonly controller = new AbortController();
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly totalTimer: NodeJS.Timeout;
  private readonly onParentAbort: () => void;
  /** Which deadline ended the call, if one did. */
  expired: Expired | null = null;

  constructor(
    private readonly parent: AbortSignal,
    readonly idleMs: number,
    readonly totalMs: number,
  ) {
    this.onParentAbort = () => this.controller.abort(parent.reason);
    parent.addEventListener('abort', this.onParentAbort, { once: true });
    this.totalTimer = setTimeout(() => this.expire('total'), totalMs);
    this.progress();
  }

  /** Aborted by a deadline or by the caller's own signal. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The server reported progress: the idle wait starts again (the total one does not). */
  progress(): void {
    if (this.expired) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.expire('idle'), this.idleMs);
  }

  dispose(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.totalTimer);
    this.parent.removeEventListener('abort', this.onParentAbort);
  }

  private expire(which: Expired): void {
    if (this.expired || this.controller.signal.aborted) return;
    this.expired = which;
    this.dispose();
    this.controller.abort(
      new DeadlineReason(which === 'idle' ? 'no answer or progress in time' : 'the call took longer than allowed'),
    );
  }
}

/** What the model and the user read when a deadline ended the call. */
export function deadlineMessage(who: string, d: CallDeadline): string {
  const s = (ms: number) => `${Math.round(ms / 1000)} s`;
  const what =
    d.expired === 'total'
      ? `did not finish within ${s(d.totalMs)} (the longest a call may take, progress or not)`
      : `did not answer within ${s(d.idleMs)}`;
  return `${who} ${what}; the call was cancelled. It may have done part of its work.`;
}

const MESSAGE_KEEP = 4000;
const DATA_KEEP = 1000;

/**
 * A JSON-RPC error as the server sent it: its code, its own message (bounded: a server's message is
 * not trusted to be small) and its data when that is small.
 */
export function serverErrorMessage(who: string, err: McpError): string {
  const own = err.message.replace(/^(MCP error -?\d+: )+/, '');
  const message = own.length > MESSAGE_KEEP ? `${own.slice(0, MESSAGE_KEEP)}… (${own.length} characters)` : own;
  return `${who} answered with error ${err.code}: ${message}${dataNote(err.data)}`;
}

function dataNote(data: unknown): string {
  if (data === undefined || data === null) return '';
  let json: string;
  try {
    json = JSON.stringify(data) ?? '';
  } catch {
    return '';
  }
  return json.length <= DATA_KEEP ? ` (data: ${json})` : ` (its data, ${json.length} characters, is left out)`;
}
