// A full disk inside a tool batch on a real small disk (tmpfs), at many free-space levels: wherever the
// space runs out, no result says a command failed when it ran, resuming after space is freed runs each
// command once, and no file is corrupt (diskFull.test.ts injects the ENOSPC instead).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { openDiskStore } from '../../../src/store';
import type { StoreEvent } from '../../../src/store/api/types';
import { FaultyFs } from '../store/faultyFs';
import { withSmallDisk } from '../store/smallDisk';
import { assertNoFalseFailures, AUTO, bigOutputs, resumeToEnd } from './diskFullSupport';
import { lines, makeRunner, tmp } from './support';

describe('agent loop: a full disk inside a tool batch', function () {
  this.timeout(300_000);
  let server: ModelServer;
  beforeEach(async () => (server = await startModelServer({ scenario: bigOutputs })));
  afterEach(async () => server.close());

  it('a real small disk at many free-space levels: never a false "failed", each command once after space is freed, no corrupt file', async () => {
    await withSmallDisk({ sizeKb: 3072 }, async (disk) => {
      const rows: string[] = [];
      for (const freeKb of [24, 64, 160, 320, 480, 700, 1000, 1400, 2000, 2800]) {
        server.reset();
        const fsl = new FaultyFs(); // pass-through on tmpfs; the capacity when no tmpfs could be mounted
        const storeDir = path.join(disk.root, `store-${freeKb}`);
        const workspace = tmp(`full-ws-${freeKb}`);
        disk.leaveFree(freeKb * 1024, fsl);
        const events: StoreEvent[] = [];
        let store = openDiskStore(storeDir, { fs: fsl, onEvent: (e) => events.push(e) });
        let { runner } = makeRunner({ baseURL: server.url, store, workspace, policy: AUTO });
        let state = 'not started';
        let detail = '';
        let runId: string | undefined;
        try {
          const h = await runner.start({ task: 'print a lot' });
          runId = h.runId;
          const out = await h.done;
          state = out.state;
          detail = out.detail ?? '';
          if (out.state !== 'completed')
            assert.match(out.detail ?? '', /ENOSPC|no space/i, `${freeKb} KB free: paused with the disk's error`);
        } catch (err) {
          state = `refused at start: ${(err as { code?: string }).code}`; // nothing ran
          assert.match(String(err), /ENOSPC|no space/i);
        }
        const ranBefore = lines(path.join(workspace, 'effects.txt')).length;
        await store.close().catch(() => undefined);
        disk.release(fsl);
        if (runId) {
          store = openDiskStore(storeDir, { onEvent: (e) => events.push(e) });
          ({ runner } = makeRunner({ baseURL: server.url, store, workspace, policy: AUTO }));
          if (/is recorded/.test(detail))
            assert.ok(
              (await store.listEffects(runId)).every((e) => e.result !== null),
              `${freeKb} KB free: the pause said the result is recorded, and a reopen finds it`,
            );
          await resumeToEnd(runner, store, runId, workspace);
          assert.deepEqual(
            lines(path.join(workspace, 'effects.txt')),
            ['1', '2', '3', '4'],
            `${freeKb} KB free: each command exactly once`,
          );
          await assertNoFalseFailures(store, runId, `${freeKb} KB free`);
          await store.close();
        }
        assert.deepEqual(
          events.filter((e) => e.kind === 'corruption'),
          [],
          `${freeKb} KB free: no corrupt file`,
        );
        rows.push(`${String(freeKb).padStart(5)} KB free → ${state}; ${ranBefore} command(s) ran before the pause`);
        fs.rmSync(storeDir, { recursive: true, force: true });
      }
      console.log(`      full disk (${disk.kind}):\n        ${rows.join('\n        ')}`);
    });
  });
});
