// A "window" for the two-process lock test: opens the store and, on each stdin command, tries to
// acquire the run (OWNER / LOCKED <holder>), releases it, or exits. One JSON line per answer.
import readline from 'node:readline';
import { RunLockedError } from '../../src/store/api/errors';
import type { RunLease } from '../../src/store/api/types';
import { childHostname, openChildStore } from './storeOf';

const env = process.env;
const say = (v: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(v)}\n`);

async function main(): Promise<void> {
  const store = openChildStore(); // disk (STORE_DIR) or the shared store (STORE_KIND=pg)
  await store.whenOpen();
  const me = {
    owner_id: `${env.LABEL}-${process.pid}`,
    label: env.LABEL!,
    pid: process.pid,
    hostname: childHostname(),
  };
  let lease: RunLease | undefined;
  say({ ready: true, pid: process.pid });
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const [cmd] = line.trim().split(' ');
    try {
      if (cmd === 'TRY') {
        lease = await store.acquire(env.RUN_ID!, me);
        await store.append(env.RUN_ID!, { phase: 'pre_tool_batch', step: 1, payload: { tool_call_count: 1 } });
        await store.flush();
        say({ owner: true });
      } else if (cmd === 'RELEASE') {
        await lease?.release();
        lease = undefined;
        say({ released: true });
      } else if (cmd === 'EXIT') break;
    } catch (err) {
      if (err instanceof RunLockedError) say({ owner: false, holder: err.holder.label, message: err.message });
      else say({ error: (err as Error).message });
    }
  }
  await store.close();
  process.exit(0);
}

void main();
