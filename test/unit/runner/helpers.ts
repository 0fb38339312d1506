// Shared by the runner tests: temp workspaces, a blob sink and a tool context. Scenario tests run the
// product's own loop (test/unit/loop/support.ts makeRunner), never a loop written for tests.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { ToolContext } from '../../../src/runner/tools';

export const REPO_ROOT = path.resolve(__dirname, '../../..');

export function tmpDir(prefix = 'aw-runner-'): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export function rmrf(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Running (a zombie left for a non-reaping PID 1 in a container counts as dead). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // no /proc (macOS): kill(0) said it exists
  }
}

/** Resolves once `cond` holds; fails after `ms`. */
export async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; !cond();) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
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
  return {
    workspaceRoot,
    signal: new AbortController().signal,
    idempotencyKey: 'run1/0/call_1',
    outputCap: 64 * 1024,
    ...over,
  };
}
