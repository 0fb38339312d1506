// Disk faults injected through the store's fs layer: a clear StoreWriteError, nothing acknowledged
// lost, the run exactly as before the failed write, the store usable once the fault clears.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { StoreWriteError } from '../../../src/store/api/errors';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import type { StoreEvent } from '../../../src/store/api/types';
import type { ChatMessage } from '../../../src/store/api/schema';
import { FaultyFs, type Op } from './faultyFs';
import * as h from './helpers';

describe('store: disk faults through the fs layer', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => (dir = h.tmpDir('aw-faults-')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const open = (ffs: FaultyFs, extra = {}) => openDiskStoreReady(dir, { fs: ffs, retryDelaysMs: [1, 2, 4], ...extra });
  const durablePost = (step: number, msgs: ChatMessage[]) => {
    const a = h.assistantWithCall(step);
    return h.postLlm(h.snapshot(step, [...msgs, a], { pending_llm_response: h.pendingResponse(a, step) }));
  };
  const tempFiles = () => h.listFiles(dir).filter((f) => f.endsWith('.tmp'));

  const cases: { op: Op; match: RegExp; what: string; partial?: boolean }[] = [
    { op: 'pwrite', match: /segment-/, what: 'appending a commit' },
    { op: 'pwrite', match: /segment-/, what: 'appending a commit, half of it reaching the disk', partial: true },
    { op: 'fdatasync', match: /segment-/, what: 'fdatasync of the segment' },
  ];
  for (const code of ['ENOSPC', 'EACCES', 'EIO']) {
    for (const c of cases) {
      it(`${code} on ${c.what}: StoreWriteError, nothing acknowledged lost, usable after`, async () => {
        const ffs = new FaultyFs();
        const reports: StoreEvent[] = [];
        const s = await open(ffs);
        const { run, lease } = await s.createRun(h.newRun(), h.owner('w'));
        const id = run.run_id;
        await s.append(id, h.runStarted());
        await s.append(id, h.preLlm(1, 1)); // write-behind, travels with the next commit
        ffs.inject(c.op, code, { match: c.match, partial: c.partial });
        const msgs: ChatMessage[] = [{ role: 'user', content: 'x' }];
        const err = await h.rejects(s.append(id, durablePost(1, msgs)), StoreWriteError, new RegExp(`${code}.*pause`));
        assert.equal(err.code, code);
        assert.equal(err.runId, id);
        assert.equal((await s.latest(id)).seq, 2, 'the failed checkpoint was not applied');
        await h.rejects(
          s.recordIntent(id, { tool_call_id: 'c', step: 1, tool_name: 't', input_hash: 'i', side_effecting: true }),
          StoreWriteError,
        );
        assert.deepEqual(await s.listEffects(id), []);
        ffs.clear();
        assert.equal((await s.append(id, durablePost(1, msgs))).seq, 3);
        await s.recordIntent(id, { tool_call_id: 'c', step: 1, tool_name: 't', input_hash: 'i', side_effecting: true });
        await lease.release();
        await s.close();
        assert.deepEqual(tempFiles(), [], 'no temp files left');
        const again = await openDiskStoreReady(dir, {
          onEvent: (e) => (e.kind === 'corruption' || e.kind === 'recovered') && reports.push(e),
        });
        assert.deepEqual(
          (await again.list(id)).map((r) => r.phase),
          ['post_llm', 'pre_llm', 'run_started'],
        );
        assert.deepEqual(reports, [], 'what the failed append left was cut off before the next one: nothing to repair');
        assert.equal((await again.listEffects(id)).length, 1);
        assert.equal((await again.loadSnapshot(id)).snapshot.messages.length, 2);
        await again.close();
      });
    }
  }

  for (const code of ['ENOSPC', 'EACCES', 'EIO']) {
    it(`${code} on mkdir: createRun fails clearly, then works`, async () => {
      const ffs = new FaultyFs();
      const s = await open(ffs);
      ffs.inject('mkdir', code, { match: /\/runs\/[^/]+$/ });
      const err = await h.rejects(
        s.createRun({ ...h.newRun(), run_id: 'fixed-id' }, h.owner('w')),
        StoreWriteError,
        new RegExp(code),
      );
      assert.equal(err.code, code);
      ffs.clear();
      const { run } = await s.createRun({ ...h.newRun(), run_id: 'fixed-id' }, h.owner('w'));
      await s.append(run.run_id, h.runStarted());
      assert.equal((await s.latest(run.run_id)).seq, 1);
      await s.close();
    });
  }

  it('ENOSPC writing a blob: StoreWriteError; the blob is written once space is back', async () => {
    const ffs = new FaultyFs();
    const s = await open(ffs);
    const { run } = await s.createRun(h.newRun(), h.owner('w'));
    ffs.inject('write', 'ENOSPC', { match: /blobs/ });
    await h.rejects(s.putBlob(run.run_id, 'big'.repeat(1000)), StoreWriteError, /ENOSPC/);
    ffs.clear();
    const hash = await s.putBlob(run.run_id, 'big'.repeat(1000));
    assert.equal(await s.getBlob(run.run_id, hash), 'big'.repeat(1000));
    await s.close();
  });

  for (const code of ['EPERM', 'EBUSY']) {
    it(`${code} on the index rename and on publishing a snapshot (compaction): retried with backoff, then succeeds`, async () => {
      const ffs = new FaultyFs();
      const s = await open(ffs);
      const { run } = await s.createRun(h.newRun(), h.owner('w'));
      await s.append(run.run_id, h.runStarted());
      ffs.inject('rename', code, { times: 2, match: /index\.json$/ });
      await s.flush();
      assert.equal(ffs.fired.rename, 2, 'failed twice, retried, succeeded');
      ffs.inject('rename', code, { times: 2, match: /snapshot\.json$/ });
      await s.compact(run.run_id);
      assert.equal(ffs.fired.rename, 4);
      await s.close();
      const again = await openDiskStoreReady(dir);
      assert.equal((await again.latest(run.run_id)).seq, 1);
      assert.equal((await again.listRuns()).runs.length, 1);
      await again.close();
    });

    it(`${code} that persists: StoreWriteError after bounded retries`, async () => {
      const ffs = new FaultyFs();
      const s = await open(ffs);
      const { run } = await s.createRun(h.newRun(), h.owner('w'));
      await s.append(run.run_id, h.runStarted());
      ffs.inject('rename', code, { match: /snapshot\.json$/ });
      const t0 = Date.now();
      await h.rejects(s.compact(run.run_id), StoreWriteError, new RegExp(code));
      assert.equal(ffs.fired.rename, 4, 'one try + three retries');
      assert.ok(Date.now() - t0 < 5_000);
      ffs.clear();
      assert.equal((await s.append(run.run_id, h.preLlm(1, 1))).seq, 2, 'the log is intact and writable');
      await s.close();
    });
  }

  it('a failed write-behind emits write-error, keeps the checkpoints queued, makes the next write reject, and retries', async () => {
    const ffs = new FaultyFs();
    const events: StoreEvent[] = [];
    const s = await open(ffs, { deferMs: 10, onEvent: (e: StoreEvent) => events.push(e) });
    const { run } = await s.createRun(h.newRun(), h.owner('w'));
    const id = run.run_id;
    await s.append(id, h.runStarted());
    ffs.inject('pwrite', 'ENOSPC', { match: /segment-/ });
    const queued = await s.append(id, h.preLlm(1, 1)); // acknowledged as queued, not as durable
    for (let i = 0; i < 200 && !events.some((e) => e.kind === 'write-error'); i++)
      await new Promise((r) => setTimeout(r, 5));
    const we = events.find((e) => e.kind === 'write-error');
    assert.ok(we && we.kind === 'write-error' && we.run_id === id && /ENOSPC/.test(we.error.message));
    assert.equal((await s.latest(id)).seq, 2, 'still queued, still readable');
    await h.rejects(s.append(id, h.preTools(1)), StoreWriteError, /ENOSPC/);
    await h.rejects(s.flush(), StoreWriteError, /ENOSPC/);
    ffs.clear();
    await h.rejects(s.append(id, h.preTools(1)), StoreWriteError, /retry succeeded/);
    assert.equal((await s.append(id, h.preTools(1))).seq, 3, 'then writes go through again');
    await s.close();
    const again = await openDiskStoreReady(dir);
    assert.deepEqual(await again.get(id, 2), queued);
    assert.equal((await again.latest(id)).seq, 3);
    await again.close();
  });

  it('a failed flush() rejects; the same flush succeeds once the fault clears', async () => {
    const ffs = new FaultyFs();
    const s = await open(ffs, { deferMs: 60_000 });
    const { run } = await s.createRun(h.newRun(), h.owner('w'));
    await s.append(run.run_id, h.runStarted());
    await s.append(run.run_id, h.preLlm(1, 1));
    ffs.inject('fdatasync', 'EIO', { match: /segment-/ });
    await h.rejects(s.flush(), StoreWriteError, /EIO/);
    ffs.clear();
    await s.flush();
    const other = await openDiskStoreReady(dir);
    assert.equal((await other.latest(run.run_id)).seq, 2);
    await other.close();
    await s.close();
  });
});

describe('store: bounded flush and close, lazy opening', () => {
  it('flush(timeout) and close(timeout) give up on a hung disk with a clear error', async () => {
    const dir = h.tmpDir('aw-hang-');
    try {
      const ffs = new FaultyFs();
      const s = await openDiskStoreReady(dir, { fs: ffs, deferMs: 60_000 });
      const { run } = await s.createRun(h.newRun(), h.owner('w'));
      await s.append(run.run_id, h.preLlm(1, 1));
      ffs.inject('fdatasync', 'EIO', { hang: true });
      const t0 = Date.now();
      await h.rejects(s.flush(100), StoreWriteError, /did not finish within 100 ms/);
      await h.rejects(s.close(100), StoreWriteError, /within 100 ms/);
      assert.ok(Date.now() - t0 < 5_000);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opening reads the index’s head only (not index.json, no run’s log); a run’s log is read when that run is first touched', async () => {
    const dir = h.tmpDir('aw-lazy-');
    try {
      const s = await openDiskStoreReady(dir);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { run, lease } = await s.createRun(h.newRun(`r${i}`), h.owner('w'));
        await s.append(run.run_id, h.runStarted());
        await s.append(run.run_id, h.terminal(1));
        await lease.release();
        ids.push(run.run_id);
      }
      await s.close();
      const ffs = new FaultyFs();
      const t = await openDiskStoreReady(dir, { fs: ffs });
      assert.equal((await t.listRuns()).runs.length, 3);
      assert.deepEqual(
        ffs.reads.map((p) => p.slice(dir.length)),
        ['/index_head.json'],
      );
      assert.equal((await t.getRun(ids[1]!))?.state, 'completed');
      const touched = ffs.reads.filter((p) => p.includes('/runs/')).map((p) => p.split('/runs/')[1]!.split('/')[0]);
      assert.deepEqual([...new Set(touched)], [ids[1]]);
      await t.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
