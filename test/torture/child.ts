// The SIGKILL torture child: starts or continues a growing run on the on-disk store, writing every
// phase a runner writes (snapshots with growing messages, effect intents/results around a real side
// effect, approvals, blobs) and printing an ACK line after each write resolves. The parent kills it
// at random moments, checks the store, and starts another child to continue.
import fs from 'node:fs';
import { RunNotOwnedError, StoreWriteError } from '../../src/store/api/errors';
import type { Approval, ChatMessage, RuntimeSnapshot, ToolExecutionRecord } from '../../src/store/api/schema';
import type { AppendInput, CheckpointStore } from '../../src/store/api/types';
import { ACK, digest, initialMessages, planStep, toolExec, type Ack } from './shared';
import { acquireWhenFree, childHostname, openChildStore } from './storeOf';

const env = process.env;
const seed = Number(env.SEED);
const steps = Number(env.STEPS);
let acks = 0;
const say = (a: Ack) => {
  if (a.k !== 'ready' && a.k !== 'stopping') acks += 1;
  process.stdout.write(`${ACK}${JSON.stringify(a)}\n`); // synchronous on a pipe: the parent has it before a stop
};

/**
 * `STOP_BEFORE_WRITE=N`: the child stops itself (SIGSTOP) just before its first write of the run that
 * checks the lease after its N-th ACK — a paused owner whose next act is a write, whatever it was
 * doing when it paused (the takeover test: a parent's SIGSTOP could also land before a read that
 * finds the run finished by another machine, and then nothing would be written to refuse).
 */
const stopBeforeWrite = Number(env.STOP_BEFORE_WRITE ?? Infinity);
let stopped = false;
function maybeStop(): void {
  if (stopped || acks < stopBeforeWrite) return;
  stopped = true;
  say({ k: 'stopping' });
  process.kill(process.pid, 'SIGSTOP');
}

/** The store, stopping before its lease-checked writes when STOP_BEFORE_WRITE says so. */
function pausing(store: CheckpointStore): CheckpointStore {
  const writes = new Set(['append', 'recordIntent', 'recordResult', 'requestApproval', 'decideApproval']);
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      if (typeof prop === 'string' && writes.has(prop))
        return (...args: unknown[]) => (maybeStop(), (v as (...a: unknown[]) => unknown).apply(target, args));
      return (v as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

const snapshot = (
  step: number,
  messages: ChatMessage[],
  execs: ToolExecutionRecord[],
  pending: RuntimeSnapshot['pending_llm_response'] = null,
): RuntimeSnapshot => ({
  step,
  state: 'running',
  context: { seed },
  llm_calls: step,
  tool_calls: execs.length,
  started_at_s: 1_700_000_000,
  usage: { input_tokens: step * 100, output_tokens: step * 10, total_tokens: step * 110 },
  total_cost_usd: null,
  session_token: null,
  checkpoint_token: null,
  pending_llm_response: pending,
  requested_model: 'torture-model',
  normalized_model: 'torture-model',
  provider_adapter: 'openai',
  final_text: '',
  final_structured: null,
  replayed_effect_count: execs.filter((e) => e.replayed).length,
  messages,
  tool_executions: execs,
  subagent_executions: [],
});

class Child {
  msgs: ChatMessage[] = initialMessages(seed);
  execs: ToolExecutionRecord[] = [];
  lastSeq = 0;

  constructor(
    private readonly store: CheckpointStore,
    private readonly runId: string,
  ) {}

  async append(input: AppendInput, durable: boolean): Promise<void> {
    const rec = await this.store.append(this.runId, input);
    this.lastSeq = rec.seq;
    say({ k: 'rec', seq: rec.seq, h: digest(rec), snap: input.snapshot ? digest(input.snapshot) : null, durable });
  }

  /** Where the run stands: the latest snapshot's messages are the truth. */
  async resume(): Promise<'done' | { phase: 'llm' | 'tools'; k: number }> {
    const latest = await this.store.latest(this.runId).catch(() => undefined);
    if (!latest) {
      await this.append(
        {
          phase: 'run_started',
          step: 0,
          payload: { agent_name: 'torture', resumed: false, task: 't', extension_version: '0', tool_schema_hash: 'h' },
        },
        true,
      );
      return { phase: 'llm', k: 1 };
    }
    this.lastSeq = latest.seq;
    if (latest.phase === 'run_terminal') return 'done';
    const snap = await this.store.loadSnapshot(this.runId).catch(() => undefined);
    if (snap) {
      this.msgs = snap.snapshot.messages;
      this.execs = snap.snapshot.tool_executions;
    }
    const k = this.msgs.filter((m) => m.role === 'assistant').length;
    const last = this.msgs[this.msgs.length - 1]!;
    if (last.role === 'assistant' && last.tool_calls?.length) return { phase: 'tools', k };
    return { phase: 'llm', k: k + 1 };
  }

  async llm(k: number): Promise<boolean> {
    const plan = planStep(seed, k, steps);
    await this.append(
      {
        phase: 'step_started',
        step: k,
        payload: { state: 'running', message_count: this.msgs.length },
        snapshot: snapshot(k, this.msgs, this.execs),
      },
      false,
    );
    await this.append(
      {
        phase: 'pre_llm',
        step: k,
        payload: { model: 'torture-model', provider: 'p', message_count: this.msgs.length },
      },
      false,
    );
    this.msgs = [...this.msgs, plan.assistant];
    const pending = plan.final
      ? null
      : {
          id: `r${k}`,
          model: 'torture-model',
          finish_reason: 'tool_calls',
          message: plan.assistant as never,
          usage: null,
          received_ms: 1_700_000_000_000 + k,
        };
    const payload = {
      model: 'torture-model',
      provider: 'p',
      finish_reason: plan.final ? 'stop' : 'tool_calls',
      tool_call_count: plan.calls.length,
      session_token: null,
      checkpoint_token: null,
      total_cost_usd: null,
    };
    await this.append(
      { phase: 'post_llm', step: k, payload, snapshot: snapshot(k, this.msgs, this.execs, pending) },
      !plan.final,
    );
    if (!plan.final) return false;
    const terminal = {
      state: 'completed',
      final_text: 'done',
      requested_model: 'm',
      normalized_model: 'm',
      provider_adapter: 'openai',
      terminal_result: { steps: k },
    };
    await this.append({ phase: 'run_terminal', step: k, payload: terminal }, true);
    return true;
  }

  async tools(k: number): Promise<void> {
    const plan = planStep(seed, k, steps);
    await this.append({ phase: 'pre_tool_batch', step: k, payload: { tool_call_count: plan.calls.length } }, false);
    const effects = new Map((await this.store.listEffects(this.runId)).map((e) => [e.tool_call_id, e]));
    const approvals = new Map((await this.store.listApprovals(this.runId)).map((a) => [a.tool_call_id, a]));
    for (const c of plan.calls) {
      if (this.msgs.some((m) => m.role === 'tool' && m.tool_call_id === c.id)) continue;
      const prior = effects.get(c.id);
      let replayed = false;
      if (prior?.result) replayed = true;
      else {
        let mode = 'first';
        if (prior) {
          // intent without result: it may have run. Never silently again: surface it, run on a decision.
          let a = approvals.get(c.id);
          if (!(a?.uncertain && a.decision === null)) a = await this.approval(c.id, k, true);
          a = await this.decide(a);
          mode = `uncertain:${a.requested_ms}`;
        } else {
          if (c.needsApproval) {
            const a = approvals.get(c.id) ?? (await this.approval(c.id, k, false));
            if (a.decision === null) await this.decide(a);
          }
          const e = await this.store.recordIntent(this.runId, {
            tool_call_id: c.id,
            step: k,
            tool_name: 'write_file',
            input_hash: `in_${c.id}`,
            side_effecting: true,
          });
          say({ k: 'eff', id: c.id, h: digest(e) });
        }
        fs.appendFileSync(env.EFFECTS_LOG!, `${this.runId}/${k}/${c.id} ${mode}\n`); // the side effect
        let blob: string | null = null;
        if (c.blob) {
          blob = await this.store.putBlob(this.runId, c.output);
          say({ k: 'blob', hash: blob });
        }
        const e = await this.store.recordResult(this.runId, c.id, {
          output: c.output,
          output_hash: `out_${c.id}`,
          is_error: false,
          blob,
        });
        say({ k: 'eff', id: c.id, h: digest(e) });
      }
      this.msgs = [...this.msgs, { role: 'tool', tool_call_id: c.id, content: c.output }];
      this.execs = [...this.execs, toolExec(k, c, replayed)];
    }
    await this.append(
      {
        phase: 'post_tool_batch',
        step: k,
        payload: { tool_calls_total: this.execs.length, tool_failures: 0 },
        snapshot: snapshot(k, this.msgs, this.execs),
      },
      false,
    );
    if (k % 3 === 0) {
      await this.store.flush();
      say({ k: 'flush', upto: this.lastSeq });
    }
  }

  private async approval(id: string, k: number, uncertain: boolean): Promise<Approval> {
    const reason = uncertain ? 'may already have run before the interruption' : 'write tools ask';
    const a = await this.store.requestApproval(this.runId, {
      tool_call_id: id,
      step: k,
      tool_name: 'write_file',
      category: 'write',
      arguments: { id },
      input_hash: `in_${id}`,
      uncertain,
      reason,
    });
    say({ k: 'appr', id, h: digest(a), uncertain });
    return a;
  }

  private async decide(a: Approval): Promise<Approval> {
    if (a.decision) return a;
    const d = await this.store.decideApproval(this.runId, a.tool_call_id, {
      kind: 'approve',
      reason: null,
      input_hash: null,
    });
    say({ k: 'appr', id: a.tool_call_id, h: digest(d), uncertain: d.uncertain });
    return d;
  }
}

async function main(): Promise<void> {
  const store = pausing(openChildStore());
  const me = {
    owner_id: `torture-${process.pid}`,
    label: `torture child ${process.pid}`,
    pid: process.pid,
    hostname: childHostname(),
  };
  say({ k: 'ready', pid: process.pid });
  let runId = env.RUN_ID;
  if (!runId) {
    const r = await store.createRun(
      { title: `torture ${seed}`, task: 't', agent_name: 'torture', model: 'torture-model' },
      me,
    );
    runId = r.run.run_id;
    say({ k: 'run', run_id: runId, seed, steps });
  } else await acquireWhenFree(store, runId, me);
  const child = new Child(store, runId);
  for (;;) {
    const at = await child.resume();
    if (at === 'done') break;
    if (at.phase === 'tools') await child.tools(at.k);
    else if (await child.llm(at.k)) break;
  }
  await store.close();
  say({ k: 'done' });
}

main().catch((err) => {
  // The store refused a write (the database went away, or another machine took the run over): the
  // run pauses here, as the runner's would; a new child resumes it.
  if (env.PAUSE_ON_STORE_ERROR && (err instanceof StoreWriteError || err instanceof RunNotOwnedError)) {
    say({ k: 'paused', message: `${err.name}: ${err.message}` });
    process.exit(3);
  }
  say({ k: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exit(1);
});
