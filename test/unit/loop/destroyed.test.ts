// Damage is damage, never a new run: a run killed in the middle of a tool batch, after its commands
// ran, then its only segment destroyed — truncated to zero, zero-filled, overwritten with garbage,
// replaced by valid frames of another kind or by another run's segment, or deleted. Resuming it through
// the real runner never runs a command again without the user's decision; the damage is reported
// naming the segment, and the segment's bytes are in quarantine.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { openDiskStore } from '../../../src/store';
import type { CheckpointStore, CorruptionReport, StoreEvent } from '../../../src/store/api/types';
import { newRun, owner, runStarted } from '../store/helpers';
import { decideLikeAUser, quarantined } from './damageSupport';
import { barrierFs, lines, makeRunner, tmp } from './support';

const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;
const SEGMENT = 'segment-000000000001.log';

/** A frame as every file of a run frames its lines (length, crc32, JSON): valid, whatever it holds. */
const frame = (v: unknown): Buffer => {
  const json = Buffer.from(JSON.stringify(v));
  return Buffer.concat([
    Buffer.from(`${json.length}\t${zlib.crc32(json).toString(16).padStart(8, '0')}\t`),
    json,
    Buffer.from('\n'),
  ]);
};

interface Killed {
  store: string;
  workspace: string;
  /** The workspace as the kill left it (log.txt with steps 1 and 2). */
  backup: string;
  runId: string;
  /** Another run's only segment in the same store. */
  foreign: Buffer;
}

/**
 * The append scenario killed just before the barrier that would carry step 2's result: both commands
 * ran, the newest commit on disk is step 2's intent. What a SIGKILL leaves is what is on disk then (the
 * page cache is the disk's): the store and workspace are copied at that moment. The run index is as the
 * run's creation left it — the run known, no commits — as when a kill comes before its next save.
 */
async function killedMidBatch(server: ModelServer): Promise<Killed> {
  const live = tmp('destroyed-live');
  const killed = tmp('destroyed-killed');
  const backup = tmp('destroyed-ws');
  let workspace = '';
  let results = 0;
  const { fs: fsl } = barrierFs({
    frame: (_n, carries) => {
      if (carries.includes('result') && ++results === 2) {
        fs.cpSync(live, killed, { recursive: true });
        fs.cpSync(workspace, backup, { recursive: true });
      }
    },
  });
  const store = openDiskStore(live, { fs: fsl, indexStructuralMs: 60_000, indexProgressMs: 60_000 });
  const other = await store.createRun(newRun('other'), owner('other'));
  await store.append(other.run.run_id, runStarted());
  await other.lease.release();
  const indexedAtCreation: CheckpointStore = Object.create(store, {
    createRun: {
      value: async (...args: Parameters<CheckpointStore['createRun']>) => {
        const created = await store.createRun(...args);
        await store.flush();
        return created;
      },
    },
  });
  const made = makeRunner({ baseURL: server.url, store: indexedAtCreation, policy: AUTO });
  workspace = made.workspace;
  const h = await made.runner.start({ task: 'append three lines' });
  assert.equal((await h.done).state, 'completed');
  await store.close();
  assert.ok(results >= 2 && fs.existsSync(path.join(killed, 'runs', h.runId)), 'killed after step 2 ran');
  fs.rmSync(path.join(killed, 'runs', h.runId, 'owner.lock'), { force: true }); // its owner died
  assert.deepEqual(lines(path.join(backup, 'log.txt')), ['step 1', 'step 2']);
  const foreign = fs.readFileSync(path.join(live, 'runs', other.run.run_id, SEGMENT));
  return { store: killed, workspace, backup, runId: h.runId, foreign };
}

/** How each kind of destruction leaves the segment: its new bytes, or null (deleted). */
const DESTROY: Record<string, (seg: Buffer, k: Killed) => Buffer | null> = {
  'truncated to zero': () => Buffer.alloc(0),
  'zero-filled': (seg) => Buffer.alloc(seg.length),
  'overwritten with garbage': (seg) =>
    Buffer.from(Array.from({ length: seg.length }, (_, i) => (i * 7919 + 13) & 0xff)),
  'valid frames of another kind': () => Buffer.concat([frame({ kind: 'notes' }), frame({ ops: [], n: 1 })]),
  "another run's segment": (_seg, k) => k.foreign,
  deleted: () => null,
};

describe('agent loop: a destroyed segment is damage, never a new run', function () {
  this.timeout(300_000);
  let server: ModelServer;
  let killed: Killed;
  before(async () => {
    server = await startModelServer({ scenario: 'append' });
    killed = await killedMidBatch(server);
  });
  after(async () => server?.close());

  for (const [kind, destroy] of Object.entries(DESTROY)) {
    it(`the run's only segment ${kind}: reported, quarantined, and nothing runs again without a decision`, async () => {
      const storeDir = tmp('destroyed-case');
      fs.cpSync(killed.store, storeDir, { recursive: true });
      fs.rmSync(killed.workspace, { recursive: true, force: true });
      fs.cpSync(killed.backup, killed.workspace, { recursive: true });
      const seg = path.join(storeDir, 'runs', killed.runId, SEGMENT);
      const bytes = destroy(fs.readFileSync(seg), killed);
      if (bytes) fs.writeFileSync(seg, bytes);
      else fs.rmSync(seg);

      const reports: CorruptionReport[] = [];
      const onEvent = (e: StoreEvent) => void (e.kind === 'corruption' && reports.push(e.report));
      const store = openDiskStore(storeDir, { onEvent });
      try {
        server.reset();
        const { runner } = makeRunner({ baseURL: server.url, store, workspace: killed.workspace, policy: AUTO });
        const r = await decideLikeAUser(runner, store, killed.runId, killed.workspace);
        assert.deepEqual(
          lines(path.join(killed.workspace, 'log.txt')),
          ['step 1', 'step 2', 'step 3'],
          'each command once',
        );
        assert.equal(r.state, 'completed');
        assert.equal(r.rejected, 2, 'steps 1 and 2 were asked about as "may already have run", and declined');
        const report = reports.find((x) => x.run_id === killed.runId);
        assert.equal(
          report?.file,
          `runs/${killed.runId}/${SEGMENT}`,
          `the report names the segment (${JSON.stringify(reports)})`,
        );
        assert.equal(report.data_lost, true);
        assert.equal(report.effects_lost, true, 'the witness counted the effects the segment held');
        if (bytes)
          assert.ok(
            quarantined(storeDir).some((q) => q.equals(bytes)),
            'the destroyed bytes are in quarantine, not deleted',
          );
      } finally {
        await store.close();
      }
    });
  }
});
