// Building a real AgentRunner for tests: a store (memory or on disk), the real openai-based provider
// over HTTP to the scripted model server, the real tools on a temp workspace.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgentRunner, type RunnerDeps } from '../../../src/runner/runner';
import { createProvider } from '../../../src/runner/provider';
import { callPolicy, createCodingRegistry, DEFAULT_POLICY, type ApprovalPolicy } from '../../../src/runner/tools';
import type { CheckpointStore, OwnerInfo } from '../../../src/store/api/types';
import { createMemoryStore } from '../../../src/store/memory/store';
import { nodeFs, openDiskStore, type FsLayer } from '../../../src/store';
import { longBody } from '../../../src/store/disk/frameKeys';

export const REPO = path.resolve(__dirname, '../../..');

export function tmp(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `aw-${prefix}-`)));
}

export function owner(label = 'test'): OwnerInfo {
  return {
    owner_id: `${label}-${process.pid}-${Math.random().toString(36).slice(2)}`,
    label,
    pid: process.pid,
    hostname: os.hostname(),
  };
}

export interface TestRunnerOptions {
  store?: CheckpointStore;
  /** Store on disk in this folder (default: memory). */
  storeDir?: string;
  workspace?: string;
  baseURL: string;
  policy?: Partial<ApprovalPolicy>;
  deps?: Partial<RunnerDeps>;
  version?: string;
}

export interface TestRunner {
  runner: AgentRunner;
  store: CheckpointStore;
  workspace: string;
}

export function makeRunner(o: TestRunnerOptions): TestRunner {
  const store = o.store ?? (o.storeDir ? openDiskStore(o.storeDir) : createMemoryStore());
  const workspace = o.workspace ?? tmp('ws');
  const policy: ApprovalPolicy = {
    ...DEFAULT_POLICY,
    ...o.policy,
    categories: { ...DEFAULT_POLICY.categories, ...o.policy?.categories },
  };
  const runner = new AgentRunner({
    store,
    provider: (model) => createProvider({ baseURL: o.baseURL, model, maxRetries: 1, timeoutMs: 5000 }),
    tools: createCodingRegistry(),
    policy: callPolicy(policy, workspace),
    workspaceRoot: workspace,
    owner: owner(),
    extensionVersion: o.version ?? '0.1.0',
    defaultModel: 'waypoints-demo-model',
    ...o.deps,
  });
  return { runner, store, workspace };
}

/** All phases of a run in seq order. */
export async function phases(store: CheckpointStore, runId: string): Promise<string[]> {
  const records = await store.list(runId, { limit: 10_000 });
  return records.reverse().map((r) => r.phase);
}

export function lines(file: string): string[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** What one commit frame of a segment carries, by op: the phase of a checkpoint, intent/result of an effect, or the op's kind. */
export function carried(frame: Buffer): string[] {
  const text = frame.toString('latin1');
  const json = JSON.parse(text.slice(text.indexOf('\t', text.indexOf('\t') + 1) + 1)) as Record<string, unknown>;
  if ('copy' in json) return ['copy']; // the copy a release appends (segment version 6): no commit
  // A frame in short keys (segment version 5) read as its commit body.
  const body = ('o' in json ? longBody(json, '') : json) as { ops?: unknown[] };
  return (body.ops ?? []).map((raw) => {
    const o = raw as {
      op: string;
      record?: { phase: string };
      effect?: { result?: unknown; process?: unknown; withdrawn_ms?: unknown };
    };
    if (o.op === 'record') return o.record!.phase;
    if (o.op === 'effect')
      return o.effect!.withdrawn_ms !== undefined
        ? 'withdrawn'
        : o.effect!.result
          ? 'result'
          : o.effect!.process
            ? 'process'
            : 'intent';
    return o.op;
  });
}

export interface BarrierHooks {
  /** Before a frame is written to a segment: the number the next barrier will have, and what the frame carries. */
  frame?(nextBarrier: number, carries: string[]): void;
  /** After a segment's fdatasync: the barrier's number, what the frames since the last one carried, and the last frame. */
  barrier?(n: number, carries: string[], lastFrame: string[]): void;
}

const isFrame = (data: Buffer): boolean => /^\d{1,12}\t[0-9a-f]{8}\t/.test(data.toString('latin1', 0, 23));

/** The real fs, noting what each durable barrier (an fdatasync of a segment) carried: the frames written since the last one. */
export function barrierFs(hooks: BarrierHooks = {}): { fs: FsLayer; barriers: string[][] } {
  const segments = new Set<number>();
  const barriers: string[][] = [];
  let since: string[] = [];
  let last: string[] = [];
  let room = false;
  const fs: FsLayer = {
    ...nodeFs,
    openForUpdate: async (p) => {
      const fd = await nodeFs.openForUpdate(p);
      if (/segment-\d+\.log$/.test(p)) segments.add(fd);
      return fd;
    },
    close: async (fd) => {
      segments.delete(fd);
      await nodeFs.close(fd);
    },
    pwrite: async (fd, data, position) => {
      // The zeros of room written ahead (runLog.ts, reserve): their sync, with no frame since the last one, is no barrier.
      if (segments.has(fd) && !data.some((b) => b !== 0)) room = true;
      // A frame (not the segment's header and witness area, written when it is created).
      if (segments.has(fd) && isFrame(data)) {
        last = carried(data);
        hooks.frame?.(barriers.length + 1, last);
        since.push(...last);
      }
      await nodeFs.pwrite(fd, data, position);
    },
    fdatasync: async (fd) => {
      await nodeFs.fdatasync(fd);
      if (!segments.has(fd)) return;
      const roomOnly = room && since.length === 0;
      room = false;
      if (roomOnly) return;
      barriers.push(since);
      since = [];
      hooks.barrier?.(barriers.length, barriers.at(-1)!, last);
    },
  };
  return { fs, barriers };
}
