// Fitting the next request into the model's window, cheapest step first:
//   0. it fits under the threshold → sent as it is;
//   1. old tool outputs (before the last N steps) become stubs — nothing is lost, read_output
//      reads them back;
//   2. a condense: the turns before the last N steps (fewer if need be) are summarized by the
//      model, as a phase of its own (pre_condense → summary → post_condense, durable), keeping the
//      system prompt, the first user message and the last steps as they are;
//   3. the last resort: every tool output stubbed. Still too long → a resumable pause that says so.
// The messages list is never changed: only the snapshot's model_context, which the next request
// is rendered from (render.ts).
import type { ChatMessage, ContextSize, ModelContext, RunState, RuntimeSnapshot } from '../../store/api/schema';
import type { ChatProvider, ToolDefinition } from '../provider/types';
import { EMPTY_CONTEXT, headLength, modelMessages, startOfLastSteps, stepLookup } from './render';
import { addUsage, summarize } from './summarize';
import type { TokenCounter } from './tokens';
import { type ContextWindow, familyWindow, formatWindow, resolveWindow } from './window';

export interface ContextSettings {
  /** Condense when a request would pass this percentage of the window. */
  thresholdPct: number;
  /** Steps kept as they are by a condense (and whose outputs are never stubbed first). */
  keepLastSteps: number;
  /** Old tool outputs longer than this (characters) are sent as a stub. */
  stubChars: number;
  /** Pause and ask before the model condenses (stubbing never asks: it loses nothing). */
  askBeforeCondensing: boolean;
  /** The user's windows per model name or prefix (tokens); win over the server's and the defaults. */
  windows: Readonly<Record<string, number>>;
}

export const DEFAULT_CONTEXT_SETTINGS: ContextSettings = {
  thresholdPct: 80,
  keepLastSteps: 4,
  stubChars: 2048,
  askBeforeCondensing: false,
  windows: {},
};

export type Fitted =
  { kind: 'send'; messages: ChatMessage[]; size: ContextSize } | { kind: 'stop'; state: RunState; detail: string };

export interface FitHost {
  rt: RuntimeSnapshot;
  provider: ChatProvider;
  counter: TokenCounter;
  tools: readonly ToolDefinition[];
  settings: ContextSettings;
  signal: AbortSignal;
  /** The user said go (resumed a run that paused to ask before condensing). */
  condenseApproved: boolean;
  /** Writes a checkpoint (post_condense with the snapshot as it is now); returns its seq. */
  checkpoint(phase: 'pre_condense' | 'post_condense', payload: Record<string, unknown>): Promise<number>;
  log(level: 'info' | 'warn', message: string): void;
}

/** Room left for the model's answer: the request itself must stay below window − reserve. */
export function hardLimit(window: number): number {
  return window - Math.min(4096, Math.floor(window * 0.1));
}

export class ContextFitter {
  private providerWindow: Promise<ContextWindow | null> | null = null;

  constructor(private readonly h: FitHost) {}

  /** The window for the next request (the provider is asked once per execution). */
  async window(): Promise<ContextWindow> {
    this.providerWindow ??= (this.h.provider.contextWindow?.(this.h.signal) ?? Promise.resolve(null)).catch(() => null);
    const model = this.h.rt.requested_model;
    return resolveWindow({
      learned: this.context().learned_window,
      setting: familyWindow(model, this.h.settings.windows),
      provider: await this.providerWindow,
      family: familyWindow(model),
    });
  }

  context(): ModelContext {
    return this.h.rt.model_context ?? { ...EMPTY_CONTEXT, stub_chars: this.h.settings.stubChars };
  }

  async measure(mc: ModelContext): Promise<{ messages: ChatMessage[]; tokens: number }> {
    const messages = modelMessages(this.h.rt.messages, mc, stepLookup(this.h.rt.tool_executions));
    return { messages, tokens: await this.h.counter.count(messages, this.h.tools) };
  }

  /**
   * The next request, fitted. `refused`: the provider refused a request of this many tokens as
   * too long (the window was lowered already); what is sent next must be smaller.
   */
  async fit(refused: number | null = null): Promise<Fitted> {
    const win = await this.window();
    const size = (tokens: number): ContextSize => ({
      tokens,
      window: win.tokens,
      window_source: win.source,
      estimated: !this.h.counter.exact,
    });
    const mc = this.context();
    const hard = hardLimit(win.tokens);
    const threshold = mc.hold ? hard : Math.min(hard, Math.floor((win.tokens * this.h.settings.thresholdPct) / 100));
    const fits = (tokens: number) => tokens <= threshold && (refused === null || tokens < refused);
    const now = await this.measure(mc);
    if (fits(now.tokens)) return { kind: 'send', messages: now.messages, size: size(now.tokens) };

    // 1. stubs for old outputs
    const head = headLength(this.h.rt.messages);
    const floor = mc.condense?.through ?? head;
    const keep = this.h.settings.keepLastSteps;
    const stubbedMc: ModelContext = {
      ...mc,
      stub_chars: this.h.settings.stubChars,
      stub_before: Math.max(mc.stub_before, startOfLastSteps(this.h.rt.messages, keep, floor)),
    };
    const stubbed = await this.measure(stubbedMc);
    if (fits(stubbed.tokens)) {
      this.h.rt.model_context = stubbedMc;
      this.h.log('info', `context: old tool outputs stubbed (${now.tokens} → ${stubbed.tokens} tokens)`);
      return { kind: 'send', messages: stubbed.messages, size: size(stubbed.tokens) };
    }

    // 2. a condense
    if (this.h.settings.askBeforeCondensing && !this.h.condenseApproved) {
      await this.h.checkpoint('pre_condense', {
        reason: refused === null ? 'threshold' : 'overflow',
        context: size(stubbed.tokens),
        awaiting_consent: true,
      });
      const pct = Math.round((100 * stubbed.tokens) / win.tokens);
      return {
        kind: 'stop',
        state: 'paused_budget',
        detail: `The conversation has grown to ${stubbed.tokens.toLocaleString('en-US')} tokens, ${pct}% of the model's ${formatWindow(win.tokens)} window. Resume to condense older turns into a summary (the full history stays in the run), or fork from an earlier checkpoint.`,
      };
    }
    const condensed = await this.condense(stubbedMc, win, refused === null ? 'threshold' : 'overflow', fits);
    if (condensed) return { kind: 'send', messages: condensed.messages, size: size(condensed.tokens) };

    // 3. every output stubbed
    const all: ModelContext = { ...this.context(), stub_before: this.h.rt.messages.length };
    const last = await this.measure(all);
    if (last.tokens <= hard && (refused === null || last.tokens < refused)) {
      this.h.rt.model_context = all;
      this.h.log('warn', `context: every tool output stubbed to fit (${last.tokens} tokens)`);
      return { kind: 'send', messages: last.messages, size: size(last.tokens) };
    }
    if (win.source === 'default' && refused === null) {
      // The window is only our guess for a model nothing is known about: let the server decide.
      this.h.log(
        'warn',
        `context: ${now.tokens} tokens may not fit this model (window unknown, assumed ${win.tokens}); sending`,
      );
      return { kind: 'send', messages: now.messages, size: size(now.tokens) };
    }
    return {
      kind: 'stop',
      state: 'paused_error',
      detail: `The conversation does not fit the model's ${formatWindow(win.tokens)}-token window even condensed (${last.tokens.toLocaleString('en-US')} tokens: the task and the latest step alone are too long). Set a larger window for this model (agentWaypoints.context.windows) if it has one and resume, or fork from an earlier checkpoint.`,
    };
  }

  /** Summarizes the turns before the last steps; false when nothing could be condensed enough. */
  private async condense(
    base: ModelContext,
    win: ContextWindow,
    reason: 'threshold' | 'overflow',
    fits: (tokens: number) => boolean,
  ): Promise<{ messages: ChatMessage[]; tokens: number } | null> {
    const msgs = this.h.rt.messages;
    const head = headLength(msgs);
    const from = base.condense?.through ?? head;
    const summaryTokens = Math.max(256, Math.min(2000, Math.floor(win.tokens * 0.08)));
    // The most steps kept whose prediction (a summary of full length) fits; at least the latest step.
    let through = -1;
    for (let n = this.h.settings.keepLastSteps; n >= 1; n--) {
      const t = startOfLastSteps(msgs, n, from);
      if (t <= from) continue;
      const predicted = await this.measure({
        ...base,
        stub_before: Math.max(base.stub_before, t),
        condense: placeholder(head, t, summaryTokens),
      });
      through = t;
      if (fits(predicted.tokens)) break;
    }
    if (through < 0) return null;
    const pre = await this.h.checkpoint('pre_condense', {
      reason,
      context: {
        tokens: (await this.measure(base)).tokens,
        window: win.tokens,
        window_source: win.source,
        estimated: !this.h.counter.exact,
      },
      awaiting_consent: false,
    });
    const result = await summarize({
      provider: this.h.provider,
      previous: base.condense?.summary ?? null,
      messages: msgs.slice(from, through),
      chunkTokens: Math.max(512, Math.floor(hardLimit(win.tokens) * 0.6) - summaryTokens),
      summaryTokens,
      signal: this.h.signal,
    });
    const next: ModelContext = {
      ...base,
      stub_before: Math.max(base.stub_before, through),
      hold: false,
      condense: {
        id: `condense-${pre}`,
        pre_seq: pre,
        head,
        through,
        summary: result.summary,
        step: this.h.rt.step,
      },
    };
    const before = this.h.rt.model_context ?? null;
    const rt = this.h.rt;
    rt.model_context = next;
    rt.llm_calls += result.calls;
    const total = addUsage(rt.usage, result.usage);
    if (total) rt.usage = total;
    rt.total_cost_usd =
      rt.total_cost_usd === null || result.cost_usd === null ? null : rt.total_cost_usd + result.cost_usd;
    const out = await this.measure(next);
    await this.h.checkpoint('post_condense', {
      condense_id: next.condense!.id,
      before,
      context: { tokens: out.tokens, window: win.tokens, window_source: win.source, estimated: !this.h.counter.exact },
      usage: result.usage,
      cost_usd: result.cost_usd,
    });
    this.h.log('info', `context: condensed messages ${from + 1}–${through} into a summary (${out.tokens} tokens now)`);
    return fits(out.tokens) || out.tokens <= hardLimit(win.tokens) ? out : null;
  }
}

/** A stand-in summary of the longest allowed length, to predict a condense's size before paying for it. */
function placeholder(head: number, through: number, tokens: number): NonNullable<ModelContext['condense']> {
  return { id: 'predicted', pre_seq: 1, head, through, summary: 'lorem ipsum '.repeat(Math.ceil(tokens / 2)), step: 0 };
}
