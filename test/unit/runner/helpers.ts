// Shared by the runner tests: temp workspaces, a tool context, and a minimal agent loop that drives
// the provider + tools against the scripted server (the real loop, with checkpoints, lives elsewhere).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { ChatMessage } from '../../../src/store/api/schema';
import type { ChatProvider } from '../../../src/runner/provider';
import { ProviderError } from '../../../src/runner/provider';
import type { ToolContext, ToolRegistry, ToolResult } from '../../../src/runner/tools';

export const REPO_ROOT = path.resolve(__dirname, '../../..');

export function tmpDir(prefix = 'aw-runner-'): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export function rmrf(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** A fresh copy of demo/workspace. */
export function demoWorkspaceCopy(): string {
  const dir = tmpDir('aw-demo-');
  fs.cpSync(path.join(REPO_ROOT, 'demo/workspace'), dir, { recursive: true });
  return dir;
}

export interface BlobSink {
  blobs: Map<string, string>;
  putBlob: (content: string) => Promise<string>;
}

export function blobSink(): BlobSink {
  const blobs = new Map<string, string>();
  return {
    blobs,
    putBlob: async (content) => {
      const h = createHash('sha256').update(content).digest('hex');
      blobs.set(h, content);
      return h;
    },
  };
}

export function toolCtx(workspaceRoot: string, over: Partial<ToolContext> = {}): ToolContext {
  return { workspaceRoot, signal: new AbortController().signal, idempotencyKey: 'run1/0/call_1', outputCap: 64 * 1024, ...over };
}

export interface MiniRun {
  messages: ChatMessage[];
  results: ToolResult[];
  llmCalls: number;
  providerErrors: ProviderError[];
  finalText: string;
}

/**
 * Drives a conversation to its final answer: call the model, run every tool call, repeat. A
 * retryable ProviderError is retried (the real loop pauses and resumes instead).
 */
export async function miniLoop(
  provider: ChatProvider,
  registry: ToolRegistry,
  task: string,
  ctx: Omit<ToolContext, 'idempotencyKey'>,
  maxCalls = 30,
): Promise<MiniRun> {
  const run: MiniRun = { messages: [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: task }], results: [], llmCalls: 0, providerErrors: [], finalText: '' };
  for (let step = 0; run.llmCalls < maxCalls; ) {
    let res;
    try {
      run.llmCalls++;
      res = await provider.complete({ messages: run.messages, tools: registry.definitions() });
    } catch (e) {
      if (e instanceof ProviderError && e.retryable) {
        run.providerErrors.push(e);
        continue;
      }
      throw e;
    }
    const msg = res.response.message;
    run.messages.push(msg);
    if (!msg.tool_calls || msg.tool_calls.length === 0) {
      run.finalText = msg.content ?? '';
      return run;
    }
    for (const call of msg.tool_calls) {
      const r = await registry.execute(call, { ...ctx, idempotencyKey: `mini/${step}/${call.id}` });
      run.results.push(r);
      run.messages.push({ role: 'tool', tool_call_id: call.id, content: r.output });
    }
    step++;
  }
  throw new Error(`miniLoop: no final answer after ${maxCalls} LLM calls`);
}
