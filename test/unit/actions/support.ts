// Shared by the action tests: a real run (the real runner over HTTP to the scripted model, real
// tools on a temp workspace, the memory store) that writes two files in two steps, and the
// product's actions over it with a scripted user (test/support/actions.ts).
import fs from 'node:fs';
import path from 'node:path';
import type { Scenario } from '../../fixtures/modelServer/scenario';
import { DEMO_MODEL_ID } from '../../fixtures/modelServer/scenario';
import type { RestoreWriter } from '../../../src/actions/restore/files';
import { testActions, type TestActions } from '../../support/actions';
import { makeRunner, type TestRunnerOptions, type TestRunner } from '../loop/support';

const write = (p: string, content: string) => ({
  reply: {
    content: `(offline demo model) writing ${p}`,
    tool_calls: [{ name: 'write_file', arguments: { path: p, content } }],
  },
});

/** Step 1 writes a.txt, step 2 writes b.txt, step 3 answers. */
export const TWO_WRITES: Scenario = {
  name: 'actions-two-writes',
  description: 'offline demo model: write a.txt, then b.txt, then answer',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    write('a.txt', 'agent a\n'),
    write('b.txt', 'agent b\n'),
    { reply: { content: '(offline demo model) Done.' } },
  ],
};

export const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;

export interface ActedRun extends TestRunner, TestActions {
  runId: string;
  /** The checkpoint where step `step` began. */
  stepStart(step: number): Promise<number>;
  file(rel: string): string | null;
}

/** Starts a run of the scenario and waits for it to stop; the actions are the product's over it. */
export async function actedRun(
  baseURL: string,
  o: Partial<TestRunnerOptions> & {
    budget?: { max_steps: number };
    trusted?: () => boolean;
    writer?: (product: RestoreWriter) => RestoreWriter;
  } = {},
): Promise<ActedRun> {
  const t = makeRunner({ baseURL, policy: AUTO, ...o });
  fs.writeFileSync(path.join(t.workspace, 'a.txt'), 'original a\n');
  const h = await t.runner.start({ task: 'Write two files', ...(o.budget ? { budget: o.budget } : {}) });
  await h.done;
  const ui = testActions({
    store: t.store,
    runner: t.runner,
    workspace: t.workspace,
    owner: t.runner.owner,
    ...(o.trusted ? { trusted: o.trusted } : {}),
    ...(o.writer ? { writer: o.writer } : {}),
  });
  return {
    ...t,
    ...ui,
    runId: h.runId,
    stepStart: async (step) =>
      (await t.store.list(h.runId, { limit: 1000 })).find((r) => r.step === step && r.phase === 'step_started')!.seq,
    file: (rel) => {
      const abs = path.join(t.workspace, rel);
      return fs.existsSync(abs) ? fs.readFileSync(abs, 'utf8') : null;
    },
  };
}

/** Waits until `check` holds (the notification's buttons act after the action has returned). */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await check();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}
