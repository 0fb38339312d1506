// A child process for the fence tests: window A on the shared store runs a batch of commands and
// stops itself (SIGSTOP) right after the result of call STOP_AFTER is recorded — between two calls of
// the batch, where nothing reaches the database. Continued (SIGCONT) after another window took the
// run over, it reports how its run ended. Prints one JSON line per event on stdout.
import { openPgStoreReady } from '../../../src/store/pg/store';
import { errorMessage } from '../../../src/common/errors';
import { makeRunner, owner } from './support';

const say = (event: Record<string, unknown>) => process.stdout.write(JSON.stringify(event) + '\n');
const env = (name: string) => process.env[name] ?? '';

async function main(): Promise<void> {
  const store = await openPgStoreReady({
    connectionString: env('PG_URL'),
    workspace: env('PROJECT'),
    heartbeatMs: 100,
    staleMs: 1_000,
  });
  const t = makeRunner({
    baseURL: env('MODEL_URL'),
    store,
    workspace: env('WORKSPACE'),
    policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
    deps: { owner: owner('A') },
  });
  let runId = '';
  store.onEvent((e) => {
    if (e.kind === 'effect' && e.effect.tool_call_id === env('STOP_AFTER') && e.effect.result) {
      say({ event: 'stopping', runId: e.run_id });
      process.kill(process.pid, 'SIGSTOP');
    }
  });
  const h = await t.runner.start({ task: 'four commands' });
  runId = h.runId;
  const out = await h.done;
  say({ event: 'done', runId, state: out.state, detail: out.detail });
  const closed = await store.close(2_000).then(
    () => null,
    (err: unknown) => errorMessage(err),
  );
  say({ event: 'closed', error: closed });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    say({ event: 'error', message: errorMessage(err) });
    process.exit(1);
  },
);
