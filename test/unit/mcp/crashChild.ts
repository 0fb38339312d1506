// A child "extension host" for the MCP crash test: starts a run on the on-disk store whose batch
// holds a long MCP operation (always allowed, as is echo), and SIGKILLs itself when the server reports the
// first progress — between the call's durable intent and its result. One JSON line per event.
import { openDiskStore } from '../../../src/store';
import { defs, everythingStdio } from '../../support/mcpServers';
import { mcpRunner } from './support';

function say(event: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(event) + '\n');
}

async function main(): Promise<void> {
  const servers = defs({ everything: everythingStdio() });
  const rules = ['trigger-long-running-operation', 'echo'].map((tool) => ({
    server: 'everything',
    tool,
    identity: servers[0]!.identity,
  }));
  const r = mcpRunner({
    baseURL: process.env.BASE_URL!,
    store: openDiskStore(process.env.STORE_DIR!),
    servers,
    rules,
  });
  r.runner.events.on((e) => {
    if (e.type !== 'tool-progress') return;
    say({ event: 'progress', progress: e.progress });
    process.kill(process.pid, 'SIGKILL');
  });
  const h = await r.runner.start({ task: 'run the long operation' });
  say({ event: 'started', runId: h.runId });
  const out = await h.done;
  say({ event: 'done', state: out.state });
}

main().catch((err) => {
  say({ event: 'error', message: err instanceof Error ? err.stack : String(err) });
  process.exit(1);
});
