// Context management's figures: the benchmark's seeded 1000-step run fed step by step
// through the real ContextFitter against a 128k window — prompt tokens sent over the run, ours
// against sending the whole history — and the time the per-request token count takes (incremental:
// each message counted once) at ≈ 100k tokens. The summaries come from a stand-in provider (a
// fixed 1,500-character summary) so no model is needed; their requests are counted apart.
import { ContextFitter, DEFAULT_CONTEXT_SETTINGS, type FitHost } from '../src/runner/context/fit';
import { CachedCounter, countText, counterFor } from '../src/runner/context/tokens';
import type { ChatProvider } from '../src/runner/provider/types';
import type { RuntimeSnapshot } from '../src/store/api/schema';
import { median } from './stats';
import { Workload } from './workload';

export interface ContextFigures {
  steps: number;
  window: number;
  oursTokens: number;
  wholeTokens: number;
  oursMax: number;
  wholeMax: number;
  /** First step whose whole history no longer fits the window (null: never). */
  wholeOverFrom: number | null;
  condenses: number;
  summaryCalls: number;
  /** Per-request count with the cache, at the request nearest 100k tokens of whole history. */
  countAt100kMs: number;
  countAt100kTokens: number;
  countMedianMs: number;
  coldCount100kMs: number;
}

const SUMMARY = 'Summary of the earlier steps (stand-in): '.padEnd(1500, 'decisions, files, open problems. ');

function standInProvider(model: string): { provider: ChatProvider; calls: () => number } {
  let calls = 0;
  const provider: ChatProvider = {
    provider_adapter: 'bench',
    requested_model: model,
    normalized_model: model,
    listModels: async () => [model],
    contextWindow: async () => null,
    complete: async () => {
      calls += 1;
      return {
        response: {
          id: null,
          model,
          finish_reason: 'stop',
          message: { role: 'assistant', content: SUMMARY },
          usage: null,
          received_ms: 0,
        },
        cost_usd: null,
        requested_model: model,
        normalized_model: model,
        provider_adapter: 'bench',
        warnings: [],
      };
    },
  };
  return { provider, calls: () => calls };
}

export async function measureContext(o: { steps: number; window: number }): Promise<ContextFigures> {
  const workload = new Workload(20261124, 'bench-context');
  const model = 'gpt-4.1-mini';
  const { provider, calls } = standInProvider(model);
  const whole = new CachedCounter(countText, true);
  let seq = 0;
  let condenses = 0;
  let context: RuntimeSnapshot['model_context'] = null;
  const host = {
    provider,
    counter: counterFor(model),
    tools: [],
    settings: { ...DEFAULT_CONTEXT_SETTINGS, windows: { [model]: o.window } },
    signal: new AbortController().signal,
    condenseApproved: true,
    checkpoint: async (phase: string) => ((condenses += phase === 'post_condense' ? 1 : 0), ++seq),
    log: () => undefined,
  } as Omit<FitHost, 'rt'> & { rt?: RuntimeSnapshot };
  const fitter = new ContextFitter(host as FitHost);
  const f = { oursTokens: 0, wholeTokens: 0, oursMax: 0, wholeMax: 0, wholeOverFrom: null as number | null };
  const countMs: number[] = [];
  let at100k = { ms: 0, tokens: 0, gap: Infinity, messages: [] as RuntimeSnapshot['messages'] };
  for (let step = 1; step <= o.steps; step++) {
    const plan = workload.nextStep();
    const snap = plan.ops.find((op) => op.kind === 'append' && op.input.phase === 'step_started');
    if (!snap || snap.kind !== 'append' || !snap.input.snapshot) continue;
    const next = snap.input.snapshot;
    const rt: RuntimeSnapshot = { ...next, model_context: context };
    host.rt = rt;
    const fitted = await fitter.fit();
    context = rt.model_context ?? null;
    if (fitted.kind !== 'send') throw new Error(`step ${step}: ${fitted.detail}`);
    f.oursTokens += fitted.size.tokens;
    f.oursMax = Math.max(f.oursMax, fitted.size.tokens);
    const t0 = performance.now();
    const all = await whole.count(rt.messages, []);
    const ms = performance.now() - t0;
    countMs.push(ms);
    f.wholeTokens += all;
    f.wholeMax = Math.max(f.wholeMax, all);
    if (all > o.window && f.wholeOverFrom === null) f.wholeOverFrom = step;
    const gap = Math.abs(all - 100_000);
    if (gap < at100k.gap) at100k = { ms, tokens: all, gap, messages: rt.messages };
  }
  const t0 = performance.now();
  await new CachedCounter(countText, true).count(at100k.messages, []);
  const coldCount100kMs = performance.now() - t0;
  return {
    steps: o.steps,
    window: o.window,
    ...f,
    condenses,
    summaryCalls: calls(),
    countAt100kMs: at100k.ms,
    countAt100kTokens: at100k.tokens,
    countMedianMs: median(countMs),
    coldCount100kMs,
  };
}

export function contextTable(c: ContextFigures): string {
  const k = (n: number) => n.toLocaleString('en-US');
  const ok = c.countAt100kMs <= 5 ? '✔' : '✘';
  return [
    `**Context** (${c.steps} steps, the benchmark's workload, a ${k(c.window)}-token window, threshold ${DEFAULT_CONTEXT_SETTINGS.thresholdPct} %, the last ${DEFAULT_CONTEXT_SETTINGS.keepLastSteps} steps kept)`,
    '',
    '| figure | ours | whole history | |',
    '|---|---|---|---|',
    `| prompt tokens sent over the run | ${k(c.oursTokens)} | ${k(c.wholeTokens)} | ${(c.wholeTokens / c.oursTokens).toFixed(1)}× less |`,
    `| largest request (tokens) | ${k(c.oursMax)} | ${k(c.wholeMax)} | ${c.oursMax <= c.window ? 'ours fits the window every time' : '✘ over the window'}${c.wholeOverFrom ? `; the whole history passes it from step ${c.wholeOverFrom}` : ''} |`,
    `| condenses (summary calls, their tokens apart) | ${c.condenses} (${c.summaryCalls}) | — | |`,
    '',
    '| token counting per request | measured | goal | |',
    '|---|---|---|---|',
    `| at ${k(c.countAt100kTokens)} tokens, incremental (each message counted once) | ${c.countAt100kMs.toFixed(2)} ms | ≤ 5 ms | ${ok} |`,
    `| median over the run, incremental | ${c.countMedianMs.toFixed(2)} ms | | |`,
    `| the same ${k(c.countAt100kTokens)} tokens counted cold (after a resume) | ${c.coldCount100kMs.toFixed(0)} ms | | |`,
  ].join('\n');
}
