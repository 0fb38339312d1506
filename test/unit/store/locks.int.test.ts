// One owner per run across processes: two child processes contend for the same run, round after
// round; a SIGKILLed holder's lock is taken over; in-process: staleness by heartbeat, lost leases.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeEnvelope } from '../../../src/store/disk/durableFile';
import { RunLockedError, RunNotOwnedError } from '../../../src/store/api/errors';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import { bundleChild } from '../../torture/run';
import { Window } from '../../support/lineChild';
import * as h from './helpers';

describe('store: one owner per run', function () {
  this.timeout(120_000);
  let dir: string;
  let js: string;
  let runId: string;
  const windows: Window[] = [];
  before(async () => {
    dir = h.tmpDir('aw-locks-');
    js = await bundleChild(dir, 'lockChild');
  });
  after(async () => {
    for (const w of windows) if (w.proc.exitCode === null && w.proc.signalCode === null) await w.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    const s = await openDiskStoreReady(path.join(dir, 'store'));
    const { run, lease } = await s.createRun(h.newRun('contended'), h.owner('creator'));
    runId = run.run_id;
    await s.append(runId, h.runStarted());
    await lease.release();
    await s.close();
  });
  const open = (label: string) => {
    const w = new Window(js, { STORE_DIR: path.join(dir, 'store'), RUN_ID: runId, LABEL: label, HEARTBEAT_MS: '100' });
    windows.push(w);
    return w;
  };
  /**
   * Window a holds the run and commits `commits` times, then stalls past b's staleMs; b takes the
   * run over and commits a `pre_tool_batch` of step `bStep`; a's next commit is refused.
   */
  const stallAndTakeOver = async (o: { commits: number; bStep: number }) => {
    const a = await openDiskStoreReady(path.join(dir, 'store'), { heartbeatMs: 60_000 });
    const b = await openDiskStoreReady(path.join(dir, 'store'), { staleMs: 50 });
    const la = await a.acquire(runId, h.owner('stalled'));
    for (let i = 0; i < o.commits; i++) {
      await a.append(runId, h.preTools(1));
      await a.flush(); // each commit checks the lock: a full read first, then its stat
    }
    await new Promise((r) => setTimeout(r, 120));
    const lb = await b.acquire(runId, h.owner('new owner'));
    await b.append(runId, h.preTools(o.bStep));
    await b.flush();
    await h.rejects(
      a.append(runId, h.preTools(1)).then(() => a.flush()),
      RunNotOwnedError,
    );
    assert.equal(la.lost, true);
    return { a, b, la, lb };
  };

  it('two processes acquiring at the same moment, 15 rounds: exactly one owner each round; the other names it', async () => {
    const a = open('window A');
    const b = open('window B');
    assert.equal((await a.next()).ready, true);
    assert.equal((await b.next()).ready, true);
    const owners: string[] = [];
    for (let round = 0; round < 15; round++) {
      a.send('TRY');
      b.send('TRY');
      const [ra, rb] = await Promise.all([a.next(), b.next()]);
      assert.equal([ra, rb].filter((r) => r.owner === true).length, 1, `round ${round}: ${JSON.stringify([ra, rb])}`);
      const [winner, loser, winnerLabel] = ra.owner ? [a, rb, 'window A'] : [b, ra, 'window B'];
      assert.equal(loser.owner, false, JSON.stringify(loser));
      assert.equal(loser.holder, winnerLabel);
      assert.match(String(loser.message), new RegExp(`held by ${winnerLabel}`));
      owners.push(winnerLabel);
      winner.send('RELEASE');
      assert.equal((await winner.next()).released, true);
    }
    a.send('EXIT');
    b.send('EXIT');
    const s = await openDiskStoreReady(path.join(dir, 'store'));
    assert.equal((await s.latest(runId)).seq, 1 + 15, 'one write per round, by its one owner');
    await s.close();
  });

  it('a SIGKILLed holder leaves a stale lock that the next window takes over at once', async () => {
    const a = open('window A');
    const b = open('window B');
    await a.next();
    await b.next();
    a.send('TRY');
    assert.equal((await a.next()).owner, true);
    b.send('TRY');
    assert.equal((await b.next()).holder, 'window A');
    await a.kill();
    b.send('TRY');
    assert.equal((await b.next()).owner, true, 'the dead holder (same host, pid gone) is stale');
    b.send('EXIT');
  });

  it('a lock whose heartbeat is older than staleMs is taken over; a fresh one on another host is not', async () => {
    const lockFile = path.join(dir, 'store', 'runs', runId, 'owner.lock');
    const now = Date.now();
    const body = {
      owner_id: 'far',
      pid: 4242,
      hostname: 'another-host',
      label: 'window on another host',
      acquired_ms: now,
      heartbeat_ms: now,
    };
    fs.writeFileSync(lockFile, encodeEnvelope('lock', body));
    const s = await openDiskStoreReady(path.join(dir, 'store'), { staleMs: 30_000 });
    await h.rejects(s.acquire(runId, h.owner('here')), RunLockedError, /another host/);
    const old = (now - 60_000) / 1000;
    fs.writeFileSync(
      lockFile,
      encodeEnvelope('lock', { ...body, heartbeat_ms: now - 60_000, acquired_ms: now - 60_000 }),
    );
    fs.utimesSync(lockFile, old, old);
    const lease = await s.acquire(runId, h.owner('here'));
    assert.equal((await s.owner(runId))?.label, 'here');
    await lease.release();
    assert.equal(fs.existsSync(lockFile), false);
    await s.close();
  });

  it('a window that stalls past staleMs loses its lease: its writes are refused, and its release leaves the new lock alone', async () => {
    const { a, b, la, lb } = await stallAndTakeOver({ commits: 0, bStep: 1 });
    await la.release();
    assert.equal((await a.owner(runId))?.label, 'new owner');
    await h.rejects(a.append(runId, h.preTools(1)), RunNotOwnedError);
    await b.append(runId, h.preTools(1));
    await lb.release();
    const c = await openDiskStoreReady(path.join(dir, 'store'));
    assert.deepEqual(
      (await c.list(runId)).map((r) => r.phase),
      ['pre_tool_batch', 'pre_tool_batch', 'run_started'],
    );
    await Promise.all([a.close(), b.close(), c.close()]);
  });

  it('a window that committed before it stalled still sees the takeover (a stat of the lock it read last is no proof when the file was replaced)', async () => {
    const { a, b, la, lb } = await stallAndTakeOver({ commits: 3, bStep: 2 });
    await la.release();
    await lb.release();
    const c = await openDiskStoreReady(path.join(dir, 'store'));
    assert.deepEqual(
      (await c.list(runId)).map((r) => [r.phase, r.step]),
      [
        ['pre_tool_batch', 2],
        ['pre_tool_batch', 1],
        ['pre_tool_batch', 1],
        ['pre_tool_batch', 1],
        ['run_started', 0],
      ],
    );
    await Promise.all([a.close(), b.close(), c.close()]);
  });

  it('hostname and pid in the lock are this machine’s', async () => {
    const s = await openDiskStoreReady(path.join(dir, 'store'));
    const lease = await s.acquire(runId, { owner_id: 'x', label: 'me', pid: process.pid, hostname: os.hostname() });
    const lock = JSON.parse(fs.readFileSync(path.join(dir, 'store', 'runs', runId, 'owner.lock'), 'utf8')).body;
    assert.deepEqual(Object.keys(lock).sort(), ['acquired_ms', 'heartbeat_ms', 'hostname', 'label', 'owner_id', 'pid']);
    assert.equal(lock.pid, process.pid);
    await lease.release();
    await s.close();
  });
});
