// Runs follow the project, not the path: a run started in one checkout of a repository is listed
// in a second checkout of the same repository at another path (another machine, a rebuilt
// container), resumed there — its writes land in the second checkout — and its file restore writes
// the right files there. The real runner over HTTP to the scripted model, the shared store on the
// throwaway cluster, two git clones of one origin.
//
// Rests on the runner taking the workspace root from the window, never from the run's stored data,
// and on stored paths being relative (issue 18): otherwise the resumed run writes into checkout one.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openPgStoreReady, type PgStore } from '../../../../src/store/pg/store';
import { workspaceIdentity } from '../../../../src/workspaceIdentity';
import { startModelServer, type ModelServer } from '../../../fixtures/modelServer/server';
import { DEMO_MODEL_ID } from '../../../fixtures/modelServer/scenario';
import { sharedPostgres } from '../../../support/postgres';
import { makeRunner, tmp } from '../../loop/support';
import { git, productRestore } from '../../runner/files/journalSupport';

const write = (p: string, content: string) => ({ name: 'write_file', arguments: { path: p, content } });

describe('shared store (postgres): a run follows the project to another checkout', function () {
  this.timeout(120_000);
  let server: ModelServer;
  const stores: PgStore[] = [];
  before(async () => {
    server = await startModelServer({
      scenario: {
        name: 'two-checkouts',
        description: 'offline demo model: two file writes, one per step',
        model: DEMO_MODEL_ID,
        subconversations: [],
        turns: [
          { reply: { content: 'Step one.', tool_calls: [write('notes.md', 'written in step 1\n')] } },
          { reply: { content: 'Step two.', tool_calls: [write('src/app.ts', 'export const v = 2;\n')] } },
          { reply: { content: 'Done.' } },
        ],
      },
    });
  });
  after(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    await server.close();
  });

  it('started in checkout one, resumed in checkout two at another path: its writes and its restore land in checkout two', async () => {
    const base = tmp('checkouts');
    const origin = path.join(base, 'origin.git');
    git(base, 'init', '-q', '--bare', origin);
    const one = path.join(base, 'laptop', 'app');
    const two = path.join(base, 'container', 'work', 'app');
    git(base, 'clone', '-q', origin, one);
    fs.mkdirSync(path.join(one, 'src'));
    fs.writeFileSync(path.join(one, 'src', 'app.ts'), 'export const v = 1;\n');
    git(one, 'add', '-A');
    git(one, 'commit', '-qm', 'v1');
    git(one, 'push', '-q', 'origin', 'HEAD');
    git(base, 'clone', '-q', origin, two);
    const idOne = await workspaceIdentity(one);
    assert.deepEqual(await workspaceIdentity(two), idOne, 'one project, two paths');
    const open = async () => {
      const s = await openPgStoreReady({ connectionString: sharedPostgres().url(), workspace: idOne.id });
      stores.push(s);
      return s;
    };
    const auto = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;

    // Checkout one: the first step, then the budget pauses the run.
    const first = makeRunner({ baseURL: server.url, store: await open(), workspace: one, policy: auto });
    const h = await first.runner.start({ task: 'Change the app in two steps', budget: { max_steps: 1 } });
    assert.equal((await h.done).state, 'paused_budget');
    assert.equal(fs.readFileSync(path.join(one, 'notes.md'), 'utf8'), 'written in step 1\n');
    await first.store.close();

    // Checkout two, another store (another machine): the run is listed, resumed, finished here.
    const storeTwo = await open();
    assert.deepEqual(
      (await storeTwo.listRuns()).runs.map((r) => r.run_id),
      [h.runId],
    );
    const second = makeRunner({ baseURL: server.url, store: storeTwo, workspace: two, policy: auto });
    const out = await (await second.runner.resume(h.runId, { budget: { max_steps: 10 }, confirmed: true })).done;
    assert.equal(out.state, 'completed', out.detail ?? '');
    assert.equal(
      fs.readFileSync(path.join(two, 'src', 'app.ts'), 'utf8'),
      'export const v = 2;\n',
      'written in checkout two',
    );
    assert.equal(
      fs.readFileSync(path.join(one, 'src', 'app.ts'), 'utf8'),
      'export const v = 1;\n',
      'checkout one untouched',
    );
    for (const e of await storeTwo.listEffects(h.runId))
      for (const f of e.files ?? []) assert.ok(!path.isAbsolute(f.path), `stored paths are relative: ${f.path}`);

    // Restore to the checkpoint before step 2's write, in checkout two.
    const step2 = (await storeTwo.listEffects(h.runId)).find((e) => e.step === 2)!;
    const restore = productRestore(storeTwo, two);
    const plan = await restore.plan(h.runId, step2.checkpoint_seq! - 1);
    assert.deepEqual(
      plan.files.map((f) => [f.path, f.action]),
      [['src/app.ts', 'revert']],
    );
    await restore.apply(h.runId, plan, { overwrite: new Set() });
    assert.equal(
      fs.readFileSync(path.join(two, 'src', 'app.ts'), 'utf8'),
      'export const v = 1;\n',
      'restored in checkout two',
    );
    assert.equal(fs.existsSync(path.join(two, 'notes.md')), false, 'step 1 wrote in checkout one: nothing of it here');
    assert.equal(fs.readFileSync(path.join(one, 'src', 'app.ts'), 'utf8'), 'export const v = 1;\n');
    assert.equal(fs.readFileSync(path.join(one, 'notes.md'), 'utf8'), 'written in step 1\n', 'checkout one untouched');
  });
});
