// Damage that makes a run fall back to the start of a step (its step_started checkpoint): the lost
// part held that step's response and a command that ran to the end. Resuming redoes that step under
// its own number, so the command the damage report names is asked about as "may already have run"
// — never run again unasked — on the disk store here, on the shared (PostgreSQL) store in fallback.int.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { openDiskStore } from '../../../src/store';
import type { CorruptionReport, StoreEvent } from '../../../src/store/api/types';
import { parseSegment } from '../../../src/store/disk/segment';
import { segmentOf } from '../store/helpers';
import { resumeAfterFallback } from './damageSupport';
import { carried, lines, makeRunner, tmp } from './support';

const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;

describe('agent loop: damage that falls back to the start of a step redoes that step, asking first', function () {
  this.timeout(300_000);
  let server: ModelServer;
  before(async () => (server = await startModelServer({ scenario: 'append' })));
  after(async () => server?.close());

  it('on disk: a destroyed frame after step 2 began', async () => {
    const storeDir = tmp('fallback-store');
    const first = openDiskStore(storeDir);
    const { runner, workspace } = makeRunner({ baseURL: server.url, store: first, policy: AUTO });
    const h = await runner.start({ task: 'append three lines', budget: { max_steps: 2 } });
    assert.equal((await h.done).state, 'paused_budget');
    await first.close();
    assert.deepEqual(lines(path.join(workspace, 'log.txt')), ['step 1', 'step 2']);

    // As a crash leaves the segment (no copy frame, which would mend it), then the frame holding
    // step 2's response and intent overwritten: the chain ends at step 2's step_started.
    const seg = segmentOf(storeDir, h.runId);
    const copy = parseSegment(fs.readFileSync(seg)).copies[0];
    if (copy) fs.truncateSync(seg, copy.start);
    const buf = fs.readFileSync(seg);
    const responses = parseSegment(buf)
      .frames.slice(1)
      .filter((f) => carried(buf.subarray(f.start, f.end)).includes('post_llm'));
    const hit = responses[1]!;
    fs.writeFileSync(
      seg,
      Buffer.concat([buf.subarray(0, hit.start), Buffer.alloc(hit.end - hit.start, 0x78), buf.subarray(hit.end)]),
    );

    const reports: CorruptionReport[] = [];
    const onEvent = (e: StoreEvent) => void (e.kind === 'corruption' && reports.push(e.report));
    const store = openDiskStore(storeDir, { onEvent });
    try {
      await resumeAfterFallback(server, store, h.runId, workspace, reports, false);
    } finally {
      await store.close();
    }
  });
});
