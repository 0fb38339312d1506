// The context window an OpenAI-compatible server states for a model in its GET /models answer
// (vLLM, llama.cpp, OpenRouter, LM Studio, Groq spell it differently: context/window.ts reads them
// all). Asked once per provider; a server that does not answer, or does not say, gives null.
import type OpenAI from 'openai';
import { windowFromModelEntry } from '../context/window';

export function modelsWindow(
  client: OpenAI,
  model: string,
): (signal?: AbortSignal) => Promise<{ tokens: number; source: 'server' } | null> {
  let found: Promise<{ tokens: number; source: 'server' } | null> | null = null;
  return (signal) =>
    (found ??= (async () => {
      try {
        const timeout = AbortSignal.timeout(5000);
        for await (const entry of client.models.list({
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        })) {
          if (entry.id !== model) continue;
          const tokens = windowFromModelEntry(entry);
          return tokens === null ? null : { tokens, source: 'server' as const };
        }
        return null;
      } catch {
        return null; // no GET /models here: the window comes from the settings or the defaults
      }
    })());
}
