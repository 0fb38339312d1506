// Damage the project's own suites missed: a lost tail after a crash, a commit replaced by another valid
// one, a missing index, a leftover lock of our own. Each test reproduces the failure through the public
// API and checks what the store says and keeps.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openDiskStoreReady, type DiskStore } from '../../../src/store/disk/store';
import type { CorruptionReport, StoreEvent } from '../../../src/store/api/types';
import type { ChatMessage } from '../../../src/store/api/schema';
import { FaultyFs } from './faultyFs';
import { parseSegment } from '../../../src/store/disk/segment';
import { withSmallDisk } from './smallDisk';
import * as h from './helpers';
import { stepWithEffect } from './segmentSupport';

interface Opened {
  store: DiskStore;
  reports: CorruptionReport[];
  recovered: string[];
}

async function open(dir: string, opts: Parameters<typeof openDiskStoreReady>[1] = {}): Promise<Opened> {
  const reports: CorruptionReport[] = [];
  const recovered: string[] = [];
  const onEvent = (e: StoreEvent) => {
    if (e.kind === 'corruption') reports.push(e.report);
    if (e.kind === 'recovered') recovered.push(e.file);
  };
  return { store: await openDiskStoreReady(dir, { ...opts, onEvent }), reports, recovered };
}

/** A run that has done `steps` steps, each with a side-effecting call (intent + result). */
async function runWithEffects(
  s: DiskStore,
  steps: number,
  title = 'victim',
): Promise<{ id: string; lease: Awaited<ReturnType<DiskStore['createRun']>>['lease'] }> {
  const { run, lease } = await s.createRun(h.newRun(title), h.owner('builder'));
  const id = run.run_id;
  await s.append(id, h.runStarted());
  let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
  for (let step = 1; step <= steps; step++) msgs = await stepWithEffect(s, id, step, msgs);
  return { id, lease };
}

/** The run's commit frames (the header left out). */
const frames = (dir: string, id: string) => parseSegment(fs.readFileSync(h.segmentOf(dir, id))).frames.slice(1);

/** What a SIGKILL leaves: every acknowledged write is on disk; the dead owner's lock is stale (removed here). */
function crashCopy(dir: string, id: string): string {
  const copy = h.tmpDir('aw-crashcopy-');
  fs.cpSync(dir, copy, { recursive: true });
  fs.rmSync(path.join(copy, 'runs', id, 'owner.lock'), { force: true });
  return copy;
}

describe('store: damage the tail cannot hide (issue 12)', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  const tmp = (p: string) => {
    const d = h.tmpDir(p);
    dirs.push(d);
    return d;
  };
  after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it('a deleted newest commit after a crash mid tool batch is reported as a lost tail, with its effect records', async () => {
    const dir = tmp('aw-tail-');
    const { store: s } = await open(dir, { indexStructuralMs: 60_000, indexProgressMs: 60_000 }); // the index lags, as after a SIGKILL
    const { id } = await runWithEffects(s, 2);
    const a = h.assistantWithCall(3);
    await s.append(
      id,
      h.postLlm(h.snapshot(3, [{ role: 'user', content: 'go' }, a], { pending_llm_response: h.pendingResponse(a, 3) })),
    );
    await s.recordIntent(id, {
      tool_call_id: 'call_3',
      step: 3,
      tool_name: 'run_command',
      input_hash: 'ih3',
      side_effecting: true,
    }); // the newest commit: an intent only
    const crashed = crashCopy(dir, id);
    dirs.push(crashed);
    await s.close();

    // The crash alone is no damage: every acknowledged commit is there.
    const plain = h.tmpDir('aw-plain-');
    dirs.push(plain);
    fs.cpSync(crashed, plain, { recursive: true });
    const p = await open(plain);
    await (await p.store.acquire(id, h.owner('next'))).release();
    assert.deepEqual(p.reports, [], 'a plain crash is not reported');
    await p.store.close();

    // The newest commit gone, cut exactly at its frame boundary (a deleted tail leaves no torn bytes to see).
    const seg = h.segmentOf(crashed, id);
    const newest = frames(crashed, id).at(-1)!;
    fs.truncateSync(seg, newest.start);
    const o = await open(crashed);
    const lease = await o.store.acquire(id, h.owner('next'));
    const r = o.reports.find((x) => x.file === `runs/${id}/${path.basename(seg)}`);
    assert.ok(r, `the lost tail is reported (reports: ${JSON.stringify(o.reports.map((x) => x.file))})`);
    assert.equal(r.data_lost, true);
    assert.equal(r.effects_lost, true, 'the witness counted an intent the log no longer has');
    assert.match(r.reason, /witness says \d+ commits were written/);
    const run = (await o.store.getRun(id))!;
    assert.equal(run.damage?.effects_lost, true, 'recorded in the run');
    assert.equal(run.damage?.step_before, 3);
    assert.equal(run.state, 'paused_error');
    assert.equal(
      (await o.store.listEffects(id)).find((e) => e.tool_call_id === 'call_3'),
      undefined,
      'the lost intent is gone from the journal …',
    );
    await o.store.compact(id); // compaction carries the damage record along, and so does an export
    const imported = await o.store.importRun(await o.store.exportRun(id), h.owner('importer'));
    assert.equal(imported.damage?.effects_lost, true, 'an imported copy still knows what was lost');
    await lease.release();
    await o.store.close();
    // … and the damage record outlives the quarantined file: a reopen still knows.
    const again = await open(crashed);
    assert.equal((await again.store.getRun(id))!.damage?.effects_lost, true);
    assert.deepEqual(again.reports, [], 'reported once, not on every open');
    await again.store.close();
  });

  it('a withdrawn intent counts as no effect on both sides: a lost newest intent after one is still seen by the witness', async () => {
    const dir = tmp('aw-withdrawn-');
    const { store: s } = await open(dir, { indexStructuralMs: 60_000, indexProgressMs: 60_000 });
    const { id } = await runWithEffects(s, 2);
    await s.recordIntent(id, h.commandIntent('call_ahead', 3), { durability: 'next-barrier' });
    await s.makeDurable(id);
    await s.withdrawIntent(id, 'call_ahead'); // it never started
    await s.makeDurable(id);
    await s.recordIntent(id, h.commandIntent('call_3', 3)); // the newest commit: an intent only
    const crashed = crashCopy(dir, id);
    dirs.push(crashed);
    await s.close();
    const seg = h.segmentOf(crashed, id);
    fs.truncateSync(seg, frames(crashed, id).at(-1)!.start); // that commit gone, cut at its frame boundary
    const o = await open(crashed);
    await (await o.store.acquire(id, h.owner('next'))).release();
    const r = o.reports.find((x) => x.file === `runs/${id}/${path.basename(seg)}`)!;
    assert.ok(r, 'the lost tail is reported');
    assert.equal(r.effects_lost, true, 'the witness counted call_3; the log holds two effects, not three');
    assert.deepEqual(
      (await o.store.listEffects(id)).map((e) => e.tool_call_id),
      ['call_1', 'call_2'],
    );
    await o.store.close();
  });

  it('effects_lost is not understated when a commit is replaced by a valid commit of another run', async () => {
    const dir = tmp('aw-replace-');
    const { store: s } = await open(dir);
    const victim = await runWithEffects(s, 3, 'victim');
    const other = await runWithEffects(s, 1, 'other'); // its commit 2 (a post_llm) is a valid frame too — with no effect record
    await victim.lease.release();
    await other.lease.release();
    await s.close();
    // As a crash leaves it: no copy frame (segmentCopy.ts), which would give the replaced commit back.
    const victimSeg = h.segmentOf(dir, victim.id);
    fs.truncateSync(victimSeg, parseSegment(fs.readFileSync(victimSeg)).copies[0]!.start);
    const foreign = frames(dir, other.id)[1]!;
    const foreignBytes = fs.readFileSync(h.segmentOf(dir, other.id)).subarray(foreign.start, foreign.end);
    const foreignOps = (foreign.value as { ops: { op: string }[] }).ops;
    assert.ok(
      foreignOps.length > 0 && !foreignOps.some((o) => o.op === 'effect'),
      'the replacement holds no effect record',
    );
    const seg = h.segmentOf(dir, victim.id);
    const bytes = fs.readFileSync(seg);
    const mine = frames(dir, victim.id)[1]!;
    fs.writeFileSync(seg, Buffer.concat([bytes.subarray(0, mine.start), foreignBytes, bytes.subarray(mine.end)]));
    const o = await open(dir);
    await (await o.store.acquire(victim.id, h.owner('next'))).release();
    const r = o.reports.find((x) => x.file === `runs/${victim.id}/${path.basename(seg)}`)!;
    assert.ok(r, 'the replaced commit is reported');
    // Its checksum starts from the other run's id (segment version 5): it fails here as damage does.
    assert.match(r.reason, /at byte \d+: checksum mismatch/);
    assert.equal(
      r.effects_lost,
      true,
      'the lost commits held effect records (the witness counts them), whatever the replacement holds',
    );
    await o.store.close();
  });

  it('an index never written before a kill is rebuilt and logged — not reported as corruption, and only once', async () => {
    const dir = tmp('aw-noindex-');
    const { store: s } = await open(dir, { indexStructuralMs: 60_000, indexProgressMs: 60_000 });
    const { id } = await runWithEffects(s, 1);
    const crashed = crashCopy(dir, id);
    dirs.push(crashed);
    await s.close();
    assert.ok(!fs.existsSync(path.join(crashed, 'index.json')), 'killed before the index was first written');
    const o = await open(crashed);
    assert.deepEqual(o.reports, [], 'no corruption report (no data was lost, nothing was quarantined)');
    assert.deepEqual(o.recovered, ['index.json']);
    assert.equal((await o.store.listRuns()).runs[0]?.run_id, id);
    await o.store.close();
    const again = await open(crashed);
    assert.deepEqual(again.recovered, [], 'the rebuilt index was written: the next open is quiet');
    await again.store.close();
  });

  it('a lock our release could not remove (read-only remount) is taken over at once by the same window', async () => {
    await withSmallDisk({ sizeKb: 4096 }, async (disk) => {
      const dir = path.join(disk.root, 'store');
      const fsl = new FaultyFs();
      const me = h.owner('window-1');
      const s = await openDiskStoreReady(dir, { fs: fsl });
      const { run, lease } = await s.createRun(h.newRun(), me);
      await s.append(run.run_id, h.runStarted());
      await s.flush();
      await disk.readOnly(fsl, async () => {
        await lease.release(); // cannot remove owner.lock on a read-only disk
      });
      assert.ok(fs.existsSync(path.join(dir, 'runs', run.run_id, 'owner.lock')), 'the lock was left behind');
      const t0 = Date.now();
      const again = await s.acquire(run.run_id, me);
      assert.ok(Date.now() - t0 < 5_000, 'not locked out for the stale period (30 s)');
      await s.append(run.run_id, h.preLlm(1, 1));
      await again.release();
      await s.close();
      const events: StoreEvent[] = [];
      const reopened = await openDiskStoreReady(dir, { onEvent: (e) => events.push(e) });
      assert.deepEqual(
        events.filter((e) => e.kind === 'corruption'),
        [],
        'no spurious corruption notification',
      );
      await reopened.close();
      console.log(`      read-only disk: ${disk.kind}, made read-only by ${disk.readOnlyKind}`);
    });
  });
});
