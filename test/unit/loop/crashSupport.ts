// The real-process side of the crash tests: crashChild.ts (bundled once) started, killed and resumed in
// child processes on the real disk store, and what the tests read back from that store.
import assert from 'node:assert/strict';
import path from 'node:path';
import { bundleScript } from '../../support/bundleChild';
import { runJsonChild, type JsonChildResult } from '../../support/jsonChild';
import { openDiskStore } from '../../../src/store';
import { lines, tmp } from './support';

let childJs: Promise<string> | undefined;

/** Runs crashChild.ts (bundled once) with `env`; `onEvent` sees each event as the child prints it. */
export async function runChild(
  env: Record<string, string>,
  onEvent?: (e: Record<string, unknown>) => void,
): Promise<JsonChildResult> {
  return runJsonChild([await (childJs ??= bundleScript(path.join(__dirname, 'crashChild.ts')))], env, onEvent);
}

export interface Trial {
  store: string;
  workspace: string;
}

export function newTrial(): Trial {
  return { store: tmp('crash-store'), workspace: tmp('crash-ws') };
}

/** The only run of the store in `dir`. */
export async function runId(dir: string): Promise<string> {
  const s = openDiskStore(dir);
  try {
    const page = await s.listRuns();
    assert.equal(page.runs.length, 1, 'one run in the store');
    return page.runs[0]!.run_id;
  } finally {
    await s.close();
  }
}

/** The finished transcript of the only run in the store. */
export async function transcript(dir: string): Promise<unknown[]> {
  const s = openDiskStore(dir);
  try {
    const id = (await s.listRuns()).runs[0]!.run_id;
    return (await s.loadSnapshot(id))!.snapshot.messages.map((m) => ({ ...m }));
  } finally {
    await s.close();
  }
}

/** Starts the run in a child on the trial's store and workspace, with the kill `env` asks for. */
export function startChild(baseURL: string, t: Trial, env: Record<string, string> = {}): Promise<JsonChildResult> {
  return runChild({ MODE: 'start', BASE_URL: baseURL, STORE_DIR: t.store, WORKSPACE: t.workspace, ...env });
}

/** Resumes in new processes until done, deciding uncertain approvals like a user who checks log.txt. */
export async function resumeInChild(t: Trial, baseURL: string): Promise<{ rejected: number }> {
  let rejected = 0;
  const id = await runId(t.store);
  const env = { BASE_URL: baseURL, STORE_DIR: t.store, WORKSPACE: t.workspace, RUN_ID: id };
  let r = await runChild({ ...env, MODE: 'resume' });
  for (let i = 0; i < 10; i++) {
    const state = r.events.find((e) => e.event === 'done')?.state;
    if (state === 'completed') return { rejected };
    assert.equal(state, 'awaiting_approval', `unexpected state ${String(state)}`);
    const s = openDiskStore(t.store);
    const pending = await s.listApprovals(id, { pendingOnly: true });
    await s.close();
    assert.ok(pending.length > 0 && pending.every((a) => a.uncertain), 'only uncertain effects come back to the user');
    const decisions = pending.map((a) => {
      const line = String((a.arguments as { command: string }).command).match(/step \d/)![0];
      const happened = lines(path.join(t.workspace, 'log.txt')).includes(line);
      if (happened) rejected += 1;
      return happened
        ? { kind: 'reject', toolCallId: a.tool_call_id, inputHash: a.input_hash, reason: 'it already ran' }
        : { kind: 'approve', toolCallId: a.tool_call_id, inputHash: a.input_hash };
    });
    r = await runChild({ ...env, MODE: 'decide', DECISIONS: JSON.stringify(decisions) });
  }
  throw new Error('run did not complete');
}
