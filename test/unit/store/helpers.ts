// Shared builders for the store tests: owners, snapshots, payloads, temp folders.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type {
  AppendInput,
  CheckpointStore,
  CorruptionReport,
  NewEffectIntent,
  OwnerInfo,
  StoreEvent,
} from '../../../src/store/api/types';
import { openDiskStoreReady, type DiskStore } from '../../../src/store/disk/store';
import type {
  ChatMessage,
  FileVersion,
  RunMeta,
  RuntimeSnapshot,
  ToolExecutionRecord,
} from '../../../src/store/api/schema';
import { sha256 } from '../../../src/common/hash';
import type { TailWitness } from '../../../src/store/core/storedSchema';
import { areaOf, readWitnessFile, WITNESS_FILE } from '../../../src/store/disk/witness';
import { canonicalJson } from '../../../src/store/api/canonical';

export function owner(label: string, id = label): OwnerInfo {
  return { owner_id: id, label, pid: process.pid, hostname: os.hostname() };
}

export const newRun = (title = 'a run') => ({
  title,
  task: `task of ${title}`,
  agent_name: 'coder',
  model: 'demo-model',
});

/** A run's meta as the files hold it, for tests below the store's API (codec, file formats). */
export const runMeta = (over: Partial<RunMeta> = {}): RunMeta => ({
  run_id: 'r1',
  thread_id: 'r1',
  title: 'a run',
  task: 'do it',
  agent_name: 'coder',
  model: 'gpt-4.1-mini',
  created_ms: 1,
  forked_from: null,
  parent_run_id: null,
  ...over,
});

export function tmpDir(prefix = 'aw-store-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** The path of a run's (first) segment file in the store folder `dir`. */
export const segmentOf = (dir: string, id: string): string =>
  path.join(
    dir,
    'runs',
    id,
    fs.readdirSync(path.join(dir, 'runs', id)).find((n) => n.startsWith('segment-'))!,
  );

/** A run's witness file (disk/witness.ts): its path, where its slots start, and the witness they hold. */
export function witnessOf(dir: string, id: string): { file: string; areaAt: number; witness: TailWitness | null } {
  const file = path.join(dir, 'runs', id, WITNESS_FILE);
  const read = readWitnessFile(fs.readFileSync(file), id);
  if (read.areaAt === null) throw new Error(`${file}: ${JSON.stringify(read.read)}`);
  return { file, areaAt: read.areaAt, witness: read.read.kind === 'ok' ? read.read.witness : null };
}

/** Writes `w` into both slots of a run's witness file (null: blank), as a lagging witness or a crash leaves them. */
export function setWitness(dir: string, id: string, w: TailWitness | null): void {
  const { file, areaAt } = witnessOf(dir, id);
  const bytes = fs.readFileSync(file);
  areaOf(w).copy(bytes, areaAt);
  fs.writeFileSync(file, bytes);
}

/**
 * Temp folders for one suite (call it inside `describe`): each made by the returned function, all
 * removed after the suite.
 */
export function suiteTmp(): (prefix: string) => string {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  return (prefix) => {
    const d = tmpDir(prefix);
    dirs.push(d);
    return d;
  };
}

export function snapshot(step: number, messages: ChatMessage[], over: Partial<RuntimeSnapshot> = {}): RuntimeSnapshot {
  return {
    step,
    state: 'running',
    context: { workspace: '/w' },
    llm_calls: step,
    tool_calls: 0,
    started_at_s: 1_700_000_000,
    usage: { input_tokens: step * 10, output_tokens: step, total_tokens: step * 11 },
    total_cost_usd: null,
    session_token: null,
    checkpoint_token: null,
    pending_llm_response: null,
    tool_executions: [],
    subagent_executions: [],
    requested_model: 'demo-model',
    normalized_model: 'demo-model',
    provider_adapter: 'openai',
    final_text: '',
    final_structured: null,
    replayed_effect_count: 0,
    messages,
    ...over,
  };
}

export const runStarted = (): AppendInput => ({
  phase: 'run_started',
  step: 0,
  payload: { agent_name: 'coder', resumed: false, task: 'task', extension_version: '0.1.0', tool_schema_hash: 'h' },
});

export const stepStarted = (s: RuntimeSnapshot): AppendInput => ({
  phase: 'step_started',
  step: s.step,
  payload: { state: s.state, message_count: s.messages.length },
  snapshot: s,
});

export const preLlm = (step: number, n: number): AppendInput => ({
  phase: 'pre_llm',
  step,
  payload: { model: 'demo-model', provider: 'demo', message_count: n },
});

export const postLlm = (s: RuntimeSnapshot): AppendInput => ({
  phase: 'post_llm',
  step: s.step,
  payload: {
    model: 'demo-model',
    provider: 'demo',
    finish_reason: 'tool_calls',
    tool_call_count: 1,
    session_token: null,
    checkpoint_token: null,
    total_cost_usd: null,
  },
  snapshot: s,
});

export const preTools = (step: number, n = 1): AppendInput => ({
  phase: 'pre_tool_batch',
  step,
  payload: { tool_call_count: n },
});
export const postTools = (step: number, n = 1): AppendInput => ({
  phase: 'post_tool_batch',
  step,
  payload: { tool_calls_total: n, tool_failures: 0 },
});

export const terminal = (step: number): AppendInput => ({
  phase: 'run_terminal',
  step,
  payload: {
    state: 'completed',
    final_text: 'done',
    requested_model: 'm',
    normalized_model: 'm',
    provider_adapter: 'openai',
    terminal_result: { ok: true },
  },
});

export function assistantWithCall(step: number, callId = `call_${step}`): ChatMessage {
  return {
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id: callId,
        type: 'function',
        function: { name: 'write_file', arguments: JSON.stringify({ path: `f${step}.txt`, content: 'x' }) },
      },
    ],
  };
}

export function pendingResponse(msg: ChatMessage, step: number): RuntimeSnapshot['pending_llm_response'] {
  return {
    id: `resp_${step}`,
    model: 'demo-model',
    finish_reason: 'tool_calls',
    message: msg as never,
    usage: null,
    received_ms: 1_700_000_000_000 + step,
  };
}

/** A command's intent (no pre-images), its input hash named after the call. */
export const commandIntent = (callId: string, step = 1): NewEffectIntent => ({
  tool_call_id: callId,
  step,
  tool_name: 'run_command',
  input_hash: `ih-${callId}`,
  side_effecting: true,
});

export function toolExec(step: number, callId: string): ToolExecutionRecord {
  return {
    tool_call_id: callId,
    tool_name: 'write_file',
    step,
    input_hash: `in_${callId}`,
    output_hash: `out_${callId}`,
    is_error: false,
    replayed: false,
    started_ms: 1,
    finished_ms: 2,
  };
}

/** JSON with sorted keys: equal data → equal text, whatever the key order (the store's own). */
export const canonical = canonicalJson;

export async function rejects<E extends Error>(
  p: Promise<unknown>,
  cls: new (...a: never[]) => E,
  match?: RegExp,
): Promise<E> {
  try {
    await p;
  } catch (err) {
    if (!(err instanceof cls))
      throw new Error(`expected ${cls.name}, got ${(err as Error)?.name}: ${(err as Error)?.message}`);
    if (match && !match.test(err.message))
      throw new Error(`${cls.name} message ${JSON.stringify(err.message)} does not match ${match}`);
    return err;
  }
  throw new Error(`expected ${cls.name}, but the call succeeded`);
}

/** Every file under dir, relative, sorted. */
export function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[])
    .filter((f) => fs.statSync(path.join(dir, f)).isFile())
    .sort();
}

/** A file version stored as a blob, the way the runner's journal stores them. */
export async function fileVersion(store: CheckpointStore, runId: string, text: string): Promise<FileVersion> {
  const blob = await store.putBlob(runId, text);
  return {
    kind: 'file',
    sha256: sha256(Buffer.from(text, 'utf8')),
    size: Buffer.byteLength(text),
    blob,
    encoding: 'utf8',
  };
}

/** A disk store opened on `dir` that keeps the corruption reports and recovery notes it says. */
export async function openCollecting(
  dir: string,
): Promise<{ s: DiskStore; reports: CorruptionReport[]; recovered: Extract<StoreEvent, { kind: 'recovered' }>[] }> {
  const reports: CorruptionReport[] = [];
  const recovered: Extract<StoreEvent, { kind: 'recovered' }>[] = [];
  const s = await openDiskStoreReady(dir, {
    onEvent: (e) => {
      if (e.kind === 'corruption') reports.push(e.report);
      if (e.kind === 'recovered') recovered.push(e);
    },
  });
  return { s, reports, recovered };
}
