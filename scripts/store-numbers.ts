// Quick numbers for the checkpoint store (docs/design.md, Targets): a synthetic run to N steps, every phase a
// runner writes, on the lowdb backend in a temp folder.  npx tsx scripts/store-numbers.ts [--steps 1000] [--seed 1]
//
// Each step: step_started (snapshot), pre_llm, post_llm (snapshot + pending response, durable),
// pre_tool_batch, then per tool call an intent and a result (durable) for side-effecting calls,
// post_tool_batch. 1–3 tool calls per step; outputs 0.5–4 KB, 2.5 % of them 50–200 KB, cut from real
// source files.
// "Content" = the JSON bytes of the new messages (what the conversation grew by).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodeFs, treeUsage, type FsLayer } from '../src/store/disk/fsLayer';
import { openDiskStoreReady } from '../src/store/disk/store';
import type { ChatMessage, RuntimeSnapshot, ToolExecutionRecord } from '../src/store/api/schema';

const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : d;
};
const STEPS = arg('--steps', 1000);
let seed = arg('--seed', 1);
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
// Tool outputs are slices of real source files (file reads are most of an agent's context), taken
// from installed packages in a fixed order so every run of this script writes the same bytes.
const CORPUS = (() => {
  const root = path.join(__dirname, '..', 'node_modules');
  const files: string[] = [];
  for (const pkg of ['typescript/lib', 'zod/v4/core', 'lowdb/lib', 'mocha/lib', 'esbuild/lib', 'fast-check/lib/cjs']) {
    const dir = path.join(root, pkg);
    if (!fs.existsSync(dir)) continue;
    for (const f of (fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).sort()) {
      if (/\.(js|ts|cjs|mjs|md)$/.test(f) && fs.statSync(path.join(dir, f)).isFile()) files.push(path.join(dir, f));
    }
  }
  return files.map((f) => fs.readFileSync(f, 'utf8')).filter((t) => t.length > 4_000);
})();
const text = (bytes: number) => {
  let out = '';
  bytes = Math.floor(bytes);
  while (out.length < bytes) {
    const src = CORPUS[Math.floor(rand() * CORPUS.length)]!;
    const n = Math.min(bytes - out.length, src.length);
    const at = Math.floor(rand() * (src.length - n));
    out += src.slice(at, at + n);
  }
  return out;
};

/** Counts what reaches the disk. */
const counted = { bytes: 0, fsyncs: 0 };
const countingFs: FsLayer = {
  ...nodeFs,
  write: async (fd, data) => {
    counted.bytes += data.length;
    return nodeFs.write(fd, data);
  },
  pwrite: async (fd, data, position) => {
    counted.bytes += data.length;
    return nodeFs.pwrite(fd, data, position);
  },
  fsync: async (fd) => {
    counted.fsyncs++;
    return nodeFs.fsync(fd);
  },
  fdatasync: async (fd) => {
    counted.fsyncs++;
    return nodeFs.fdatasync(fd);
  },
};

function snapshot(
  step: number,
  messages: ChatMessage[],
  execs: ToolExecutionRecord[],
  pending: RuntimeSnapshot['pending_llm_response'],
): RuntimeSnapshot {
  return {
    step,
    state: 'running',
    context: { workspace: '/home/user/project', active_ms: step * 1500 },
    llm_calls: step,
    tool_calls: execs.length,
    started_at_s: 1_736_931_600,
    usage: { input_tokens: step * 2000, output_tokens: step * 150, total_tokens: step * 2150 },
    total_cost_usd: step * 0.002,
    session_token: null,
    checkpoint_token: null,
    pending_llm_response: pending,
    requested_model: 'gpt-4.1-mini',
    normalized_model: 'gpt-4.1-mini',
    provider_adapter: 'openai',
    final_text: '',
    final_structured: null,
    replayed_effect_count: 0,
    messages,
    tool_executions: execs,
    subagent_executions: [],
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function rawFsyncWrite(dir: string): Promise<number> {
  const times: number[] = [];
  const data = Buffer.from('x'.repeat(4096));
  for (let i = 0; i < 60; i++) {
    const t0 = performance.now();
    const tmp = path.join(dir, `raw.${i}.tmp`);
    const fd = fs.openSync(tmp, 'w');
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(tmp, path.join(dir, `raw.${i}`));
    const dfd = fs.openSync(dir, 'r');
    fs.fsyncSync(dfd);
    fs.closeSync(dfd);
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** Resume in a fresh process (what a reload of VS Code pays): cold JIT, empty heap. */
async function resumeColdChild(where: string, id: string): Promise<void> {
  const me = { owner_id: 'cold', label: 'cold', pid: process.pid, hostname: os.hostname() };
  const t0 = performance.now();
  const s = await openDiskStoreReady(where, { compactAfterCommits: Infinity });
  const l = await s.acquire(id, me);
  await s.loadSnapshot(id);
  const ms = performance.now() - t0;
  await l.release();
  await s.close();
  process.stdout.write(JSON.stringify({ ms }));
}

function resumeCold(where: string, id: string): number {
  const out = execFileSync(process.execPath, ['--import', 'tsx', __filename, '--resume-cold', where, id], {
    encoding: 'utf8',
  });
  return (JSON.parse(out) as { ms: number }).ms;
}

async function main(): Promise<void> {
  const cold = process.argv.indexOf('--resume-cold');
  if (cold >= 0) return resumeColdChild(process.argv[cold + 1]!, process.argv[cold + 2]!);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-numbers-'));
  const storeDir = path.join(dir, 'store');
  const store = await openDiskStoreReady(storeDir, { fs: countingFs });
  const me = { owner_id: 'bench', label: 'bench', pid: process.pid, hostname: os.hostname() };
  const { run, lease } = await store.createRun(
    { title: 'numbers', task: 'synthetic', agent_name: 'bench', model: 'gpt-4.1-mini' },
    me,
  );
  const id = run.run_id;
  await store.append(id, {
    phase: 'run_started',
    step: 0,
    payload: {
      agent_name: 'bench',
      resumed: false,
      task: 'synthetic',
      extension_version: '0.1.0',
      tool_schema_hash: 'h',
    },
  });
  let msgs: ChatMessage[] = [
    { role: 'system', content: 'You are a coding agent. '.repeat(40) },
    { role: 'user', content: 'Refactor the project. '.repeat(10) },
  ];
  let execs: ToolExecutionRecord[] = [];
  let lastSnapshotLen = 0;
  let contentTotal = Buffer.byteLength(JSON.stringify(msgs));
  const per: { ms: number; bytes: number; content: number; fsyncs: number }[] = [];
  for (let k = 1; k <= STEPS; k++) {
    const n = 1 + Math.floor(rand() * 3);
    const calls = Array.from({ length: n }, (_, i) => ({
      id: `call_${k}_${i}`,
      side: rand() < 0.4,
      output: text(rand() < 0.025 ? 50_000 + rand() * 150_000 : 500 + rand() * 3_500),
    }));
    const assistant: ChatMessage = {
      role: 'assistant',
      content: rand() < 0.5 ? null : text(200),
      tool_calls: calls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.side ? 'write_file' : 'read_file', arguments: JSON.stringify({ path: `src/f${k}.ts` }) },
      })),
    };
    const toolMsgs: ChatMessage[] = calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: c.output }));
    const content = Buffer.byteLength(JSON.stringify([assistant, ...toolMsgs]));
    contentTotal += content;
    const b0 = counted.bytes;
    const f0 = counted.fsyncs;
    const t0 = performance.now();
    // ── the phases of one step, as the runner writes them ──
    await store.append(id, {
      phase: 'step_started',
      step: k,
      payload: { state: 'running', message_count: msgs.length },
      snapshot: snapshot(k, msgs, execs, null),
    });
    await store.append(id, {
      phase: 'pre_llm',
      step: k,
      payload: { model: 'gpt-4.1-mini', provider: 'openai', message_count: msgs.length },
    });
    msgs = [...msgs, assistant];
    lastSnapshotLen = msgs.length;
    const pending = {
      id: `r${k}`,
      model: 'gpt-4.1-mini',
      finish_reason: 'tool_calls',
      message: assistant as never,
      usage: { input_tokens: 2000, output_tokens: 150, total_tokens: 2150 },
      received_ms: Date.now(),
    };
    await store.append(id, {
      phase: 'post_llm',
      step: k,
      payload: {
        model: 'gpt-4.1-mini',
        provider: 'openai',
        finish_reason: 'tool_calls',
        tool_call_count: n,
        session_token: null,
        checkpoint_token: null,
        total_cost_usd: k * 0.002,
      },
      snapshot: snapshot(k, msgs, execs, pending),
    });
    await store.append(id, { phase: 'pre_tool_batch', step: k, payload: { tool_call_count: n } });
    for (const c of calls) {
      if (c.side) {
        await store.recordIntent(id, {
          tool_call_id: c.id,
          step: k,
          tool_name: 'write_file',
          input_hash: `in_${c.id}`,
          side_effecting: true,
        });
        await store.recordResult(id, c.id, {
          output: c.output,
          output_hash: `out_${c.id}`,
          is_error: false,
          blob: null,
        });
      }
      execs = [
        ...execs,
        {
          tool_call_id: c.id,
          tool_name: c.side ? 'write_file' : 'read_file',
          step: k,
          input_hash: `in_${c.id}`,
          output_hash: `out_${c.id}`,
          is_error: false,
          replayed: false,
          started_ms: 1,
          finished_ms: 2,
        },
      ];
    }
    msgs = [...msgs, ...toolMsgs];
    await store.append(id, {
      phase: 'post_tool_batch',
      step: k,
      payload: { tool_calls_total: execs.length, tool_failures: 0 },
    });
    per.push({ ms: performance.now() - t0, bytes: counted.bytes - b0, content, fsyncs: counted.fsyncs - f0 });
  }
  await store.flush();
  const raw = await rawFsyncWrite(dir);
  const runDir = (d: string) => path.join(d, 'runs', id);
  // the state a crash would leave: every commit as written, no compaction
  const crashed = `${storeDir}-crashed`;
  fs.cpSync(storeDir, crashed, { recursive: true });
  fs.rmSync(path.join(runDir(crashed), 'owner.lock'));
  const usage = await treeUsage(nodeFs, runDir(storeDir));
  const beforeRelease = counted.bytes;
  await lease.release(); // a clean pause: the log is compacted (it has grown ≥ 64 commits)
  await store.close();
  const compactionBytes = counted.bytes - beforeRelease;
  const usageReleased = await treeUsage(nodeFs, runDir(storeDir));

  // ── resume: open the store, acquire the run, load its latest snapshot ──
  const resume = async (where: string) => {
    const times: number[] = [];
    const readOnly: number[] = [];
    for (let i = 0; i < 5; i++) {
      let t0 = performance.now();
      let s = await openDiskStoreReady(where, { compactAfterCommits: Infinity }); // measure, do not compact
      const l = await s.acquire(id, me);
      const snap = await s.loadSnapshot(id);
      times.push(performance.now() - t0);
      if (snap.snapshot.messages.length !== lastSnapshotLen) throw new Error('resume read the wrong snapshot');
      await l.release();
      await s.close();
      t0 = performance.now();
      s = await openDiskStoreReady(where, { compactAfterCommits: Infinity });
      await s.loadSnapshot(id);
      readOnly.push(performance.now() - t0);
      await s.close();
    }
    return { acquire: median(times), readOnly: median(readOnly) };
  };
  const before = await resume(crashed);
  const compacted = await resume(storeDir);
  const coldCrashed = median([0, 1, 2].map(() => resumeCold(crashed, id)));
  const coldCompacted = median([0, 1, 2].map(() => resumeCold(storeDir, id)));
  const usageCompacted = usageReleased;

  // ── report ──
  const window = (k: number) => per.slice(Math.max(0, k - 6), Math.min(per.length, k + 5));
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const row = (k: number) => {
    if (k > per.length) return null;
    const w = window(k);
    return {
      k,
      ms: avg(w.map((x) => x.ms)),
      single: per[k - 1]!.ms,
      bytes: avg(w.map((x) => x.bytes)),
      amp: w.reduce((a, x) => a + x.bytes, 0) / w.reduce((a, x) => a + x.content, 0),
      fsyncs: avg(w.map((x) => x.fsyncs)),
    };
  };
  const rows = [10, 100, 1000].map(row).filter((r) => r !== null);
  const amps = per.slice(1).map((x, i) => x.bytes / ((per[i]!.content + x.content) / 2)); // a step's messages are written in the next step's commit
  const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`;
  const mb = (b: number) => `${(b / 1024 / 1024).toFixed(2)} MB`;
  console.log(
    `\nstore numbers — ${STEPS} steps, content ${mb(contentTotal)} (${os.cpus().length} CPUs, Node ${process.versions.node}, load average ${os.loadavg()[0]!.toFixed(2)})\n`,
  );
  console.log(
    '| step | write time (mean of 11 steps around it) | that step alone | bytes written / step | write amplification | fsyncs / step |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.k} | ${r.ms.toFixed(2)} ms | ${r.single.toFixed(2)} ms | ${kb(r.bytes)} | ${r.amp.toFixed(2)} | ${r.fsyncs.toFixed(1)} |`,
    );
  const r10 = rows[0]!;
  const rLast = rows[rows.length - 1]!;
  const totalWritten = per.reduce((a, x) => a + x.bytes, 0);
  const sortedAmp = [...amps].sort((a, b) => a - b);
  console.log(`\n| figure | value | target |`);
  console.log('|---|---|---|');
  console.log(`| step${rLast.k} / step10 write time | ${(rLast.ms / r10.ms).toFixed(2)} | ≤ 1.5 |`);
  console.log(
    `| write amplification, whole run (bytes written / content) | ${(totalWritten / contentTotal).toFixed(2)} (${((totalWritten + compactionBytes) / contentTotal).toFixed(2)} with the compaction when the run was released) | ≤ 3 |`,
  );
  console.log(
    `| write amplification per step (p50 / p99 / max; a step's messages land in the next step's commit, so each step is compared with the mean content of it and the one before) | ${sortedAmp[Math.floor(amps.length / 2)]!.toFixed(2)} / ${sortedAmp[Math.floor(amps.length * 0.99)]!.toFixed(2)} / ${sortedAmp[amps.length - 1]!.toFixed(2)} | ≤ 3 |`,
  );
  console.log(
    `| storage / content (logical bytes) | ${(usage.size / contentTotal).toFixed(2)} (${mb(usage.size)} in ${usage.files} files) | ≤ 2 |`,
  );
  console.log(
    `| storage / content (allocated blocks) | ${(usage.allocated / contentTotal).toFixed(2)} (${mb(usage.allocated)}) | ≤ 2 |`,
  );
  console.log(
    `| storage / content after the run is released (auto-compacted; logical / allocated) | ${(usageCompacted.size / contentTotal).toFixed(2)} / ${(usageCompacted.allocated / contentTotal).toFixed(2)} (${usageCompacted.files} files) | ≤ 2 |`,
  );
  console.log(
    `| resume after a clean pause (compacted log): open + acquire + loadSnapshot / read-only (median of 5) | ${compacted.acquire.toFixed(1)} / ${compacted.readOnly.toFixed(1)} ms | ≤ 150 ms |`,
  );
  console.log(
    `| resume after a crash (${usage.files} files, never compacted): open + acquire + loadSnapshot / read-only | ${before.acquire.toFixed(1)} / ${before.readOnly.toFixed(1)} ms | ≤ 150 ms |`,
  );
  console.log(
    `| the same in a fresh process (a reload: cold JIT; median of 3): compacted / after a crash | ${coldCompacted.toFixed(1)} / ${coldCrashed.toFixed(1)} ms | ≤ 150 ms |`,
  );
  const durablePerStep = avg(per.map((x) => x.fsyncs)) / 2;
  console.log(
    `| distance to the disk's limit: step${rLast.k} time / (durable commits per step × raw fsync'd 4 KB write+rename+dir fsync = ${durablePerStep.toFixed(1)} × ${raw.toFixed(2)} ms) | ${(rLast.ms / (durablePerStep * raw)).toFixed(2)} | ≤ 1.5 |`,
  );
  if (process.argv.includes('--keep')) console.log(`\nkept: ${storeDir} (run ${id})`);
  else fs.rmSync(dir, { recursive: true, force: true });
}

void main();
