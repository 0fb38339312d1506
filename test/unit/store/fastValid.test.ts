// The load path's fast validation (src/store/core/fastValid.ts) against zod, its source of truth:
// whatever it says yes to, zod accepts and parses to an equal value — for every schema the store
// has, on real data (the committed fixtures' runs and a benchmark run) and on that data damaged at
// random (a value replaced, a key dropped or added, a number made NaN, Infinity, negative or
// fractional, an object made an array …). And it does say yes to real data: the types a run's log
// is checked against at load are modelled whole.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import type { z } from 'zod';
import * as api from '../../../src/store/api/schema';
import * as stored from '../../../src/store/core/storedSchema';
import { fastValid, fastValidModels } from '../../../src/store/core/fastValid';
import { createMemoryStore } from '../../../src/store';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import type { RunExportBody } from '../../../src/store/core/storedSchema';
import { BENCH_OWNER } from '../../../bench/contenders/ours';
import { applyOp, Workload } from '../../../bench/workload';
import * as h from './helpers';
import { decodeEnvelope } from '../../../src/store/disk/durableFile';
import { SegmentHeader } from '../../../src/store/disk/segment';
import { readFrame } from '../../../src/store/disk/frame';
import { readWitnessFile, WITNESS_FILE } from '../../../src/store/disk/witness';

/** The committed store of format 1 (test/fixtures/store-format1). */
const FIXTURE = path.resolve(__dirname, '../../fixtures/store-format1/store');

const isSchema = (v: unknown): v is z.ZodType => typeof v === 'object' && v !== null && '_zod' in v;
const SCHEMAS: [string, z.ZodType][] = [
  ...Object.entries(api),
  ...Object.entries(stored),
  ['SegmentHeader', SegmentHeader] as const,
].flatMap(([name, v]: readonly [string, unknown]) => (isSchema(v) ? [[name, v] as [string, z.ZodType]] : []));

/** Real values of each record type, by schema name. */
async function samples(): Promise<Record<string, unknown[]>> {
  const bodies: RunExportBody[] = [];
  {
    const dir = h.tmpDir('aw-fast-');
    fs.cpSync(FIXTURE, dir, { recursive: true });
    const s = await openDiskStoreReady(dir);
    for (const run of (await s.listRuns({ limit: 100 })).runs)
      bodies.push(stored.RunExport.parse(await s.exportRun(run.run_id)).body);
    await s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const mem = createMemoryStore();
  const w = new Workload(11, 'fast-run');
  const { lease } = await mem.createRun({ ...w.runInput, run_id: 'fast-run' }, BENCH_OWNER);
  await mem.append('fast-run', w.runStarted);
  for (let s = 0; s < 12; s++) for (const op of w.nextStep().ops) await applyOp(mem, 'fast-run', op);
  await lease.release();
  bodies.push(stored.RunExport.parse(await mem.exportRun('fast-run')).body);
  await mem.close();

  const out: Record<string, unknown[]> = {};
  const add = (name: string, ...vs: unknown[]) => {
    if (vs.length > 0) (out[name] ??= []).push(...vs.map((v) => structuredClone(v)));
  };
  // The small files a disk store opens with (index.json, a run's owner.lock, a segment's header frame,
  // the witness file's slots), as a run being written leaves them.
  const dir = h.tmpDir('aw-fast-disk-');
  const disk = await openDiskStoreReady(dir);
  const dw = new Workload(12, 'fast-disk');
  await disk.createRun({ ...dw.runInput, run_id: 'fast-disk' }, BENCH_OWNER);
  await disk.append('fast-disk', dw.runStarted);
  for (let s = 0; s < 3; s++) for (const op of dw.nextStep().ops) await applyOp(disk, 'fast-disk', op);
  await disk.flush();
  const runDir = path.join(dir, 'runs', 'fast-disk');
  add('IndexBody', decodeEnvelope(fs.readFileSync(path.join(dir, 'index.json')), 'index.json', 'index', null));
  add('LockBody', decodeEnvelope(fs.readFileSync(path.join(runDir, 'owner.lock')), 'owner.lock', 'lock', 'fast-disk'));
  const fixtureRuns = path.join(FIXTURE, 'runs');
  const files = [
    ...fs.readdirSync(runDir).map((n) => [runDir, n]),
    ...fs
      .readdirSync(fixtureRuns)
      .flatMap((r) => fs.readdirSync(path.join(fixtureRuns, r)).map((n) => [path.join(fixtureRuns, r), n])),
  ];
  for (const [folder, name] of files) {
    if (fs.statSync(path.join(folder!, name!)).isDirectory()) continue; // (blobs/)
    const buf = fs.readFileSync(path.join(folder!, name!));
    if (name === WITNESS_FILE) {
      const w = readWitnessFile(buf, path.basename(folder!)).read;
      if (w.kind === 'ok') add('TailWitness', w.witness);
    }
    const head = /^segment-\d+\.log$/.test(name!) ? readFrame(buf, 0) : null;
    if (head?.ok) add('SegmentHeader', head.frame.value);
  }
  await disk.close();
  fs.rmSync(dir, { recursive: true, force: true });
  for (const b of bodies) {
    add('RunMeta', b.meta);
    add('CheckpointRecord', ...b.records);
    add('SnapshotHeader', ...b.records.flatMap((r) => (r.snapshot ? [r.snapshot] : [])));
    add('Approval', ...b.approvals);
    add('Effect', ...b.effects);
    add('InboxMessage', ...b.inbox);
    add('RestoreRecord', ...(b.restores ?? []));
    add('Damage', ...(b.damage ?? []));
    const ITEM = {
      messages: 'ChatMessage',
      tool_executions: 'ToolExecutionRecord',
      subagent_executions: 'SubagentExecutionRecord',
    };
    for (const l of b.lists) add(ITEM[l.field], ...l.items);
    // A commit as the log holds it (the body zod parses at load): every kind of op.
    const ops = [
      ...b.records.map((record) => {
        const tails = b.lists.filter((x) => x.seq === record.seq);
        const lists = Object.fromEntries(tails.map((t) => [t.field, { base: t.base, items: t.items }]));
        return { op: 'record', record, ...(tails.length > 0 ? { lists } : {}) };
      }),
      ...b.approvals.map((approval) => ({ op: 'approval', approval })),
      ...b.effects.map((effect) => ({ op: 'effect', effect })),
      ...b.inbox.map((message) => ({ op: 'inbox', message })),
      ...(b.restores ?? []).map((restore) => ({ op: 'restore', restore })),
      ...(b.damage ?? []).map((damage) => ({ op: 'damage', damage })),
      { op: 'state', state: b.state, detail: b.state_detail, ms: b.state_ms },
    ];
    // Commits of a few ops each (damaging each leaf of a whole run's body in turn would take long).
    for (let i = 0; i < ops.length; i += 3)
      add('StoredCommitBody', {
        run_id: b.meta.run_id,
        first: i + 1,
        last: i + 1,
        ...(i === 0 ? { meta: b.meta } : {}),
        ops: ops.slice(i, i + 3),
      });
    add('CommitOp', ...ops);
  }
  return out;
}

/** The invariant: a yes of the fast path is a yes of zod, with an equal result. Returns the fast path's answer. */
function agrees(name: string, schema: z.ZodType, v: unknown): boolean {
  if (!fastValid(schema)(v)) return false;
  const r = schema.safeParse(v);
  assert.ok(r.success, `${name}: the fast path accepted what zod refuses (${r.error?.issues[0]?.message}): ${show(v)}`);
  assert.deepStrictEqual(r.data, v, `${name}: zod's parse changes what the fast path accepted: ${show(v)}`);
  return true;
}

const show = (v: unknown) => {
  try {
    return JSON.stringify(v).slice(0, 400);
  } catch {
    return String(v);
  }
};

/** Every path into a value (keys and indexes), the value itself first. */
function paths(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  return out;
}

const ODD = [NaN, Infinity, -Infinity, -1, 0.5, 2 ** 60, -0, '', 'x'.repeat(300), null, [], {}, true, 0, 'system'];

type Damage =
  | { kind: 'replace'; value: unknown }
  | { kind: 'drop' }
  | { kind: 'add'; key: string; value: unknown }
  | { kind: 'wrap' };

const damageArb: fc.Arbitrary<Damage> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), value: fc.oneof(fc.jsonValue(), fc.constantFrom(...ODD)) }),
  fc.record({ kind: fc.constant('drop' as const) }),
  fc.record({
    kind: fc.constant('add' as const),
    key: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'role', 'op', 'seq')),
    value: fc.jsonValue(),
  }),
  fc.record({ kind: fc.constant('wrap' as const) }),
);

/** A copy of `v` with one damage at `at` (keys added with defineProperty, so `__proto__` is an own key as JSON.parse makes it). */
function damaged(v: unknown, at: (string | number)[], d: Damage): unknown {
  const copy = structuredClone(v);
  const root = { v: copy } as Record<string | number, unknown>;
  let parent: Record<string | number, unknown> = root;
  let key: string | number = 'v';
  for (const k of at) {
    parent = parent[key] as Record<string | number, unknown>;
    key = k;
  }
  const target = parent[key];
  switch (d.kind) {
    case 'replace':
      parent[key] = structuredClone(d.value);
      break;
    case 'drop':
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key];
      break;
    case 'add':
      if (typeof target === 'object' && target !== null && !Array.isArray(target))
        Object.defineProperty(target, d.key, { value: d.value, enumerable: true, writable: true, configurable: true });
      else parent[key] = [target];
      break;
    case 'wrap':
      parent[key] = Array.isArray(target) ? Object.fromEntries(target.map((x, i) => [String(i), x])) : [target];
      break;
  }
  return root.v;
}

describe('store: the fast validation path agrees with zod', function () {
  this.timeout(120_000);
  let real: Record<string, unknown[]>;
  before(async () => {
    real = await samples();
  });

  it('models whole every type a run log is checked against at load, and says yes to real data', () => {
    for (const name of [
      'StoredCommitBody',
      'CheckpointRecord',
      'ChatMessage',
      'ToolExecutionRecord',
      'SubagentExecutionRecord',
      // the small files an open and a resume read first (disk/durableFile.ts, load.ts, witness.ts)
      'IndexBody',
      'LockBody',
      'SegmentHeader',
      'TailWitness',
    ]) {
      const schema = SCHEMAS.find(([n]) => n === name)![1];
      assert.ok(fastValidModels(schema), `${name} is modelled`);
    }
    for (const [name, values] of Object.entries(real)) {
      const schema = SCHEMAS.find(([n]) => n === name)![1];
      for (const v of values) {
        assert.ok(schema.safeParse(v).success, `${name}: a real sample zod accepts`);
        if (fastValidModels(schema)) assert.ok(fastValid(schema)(v), `${name}: the fast path takes ${show(v)}`);
      }
    }
    for (const name of [
      'CheckpointRecord',
      'ChatMessage',
      'ToolExecutionRecord',
      'Effect',
      'Approval',
      'StoredCommitBody',
      'IndexBody',
      'LockBody',
      'SegmentHeader',
      'TailWitness',
    ])
      assert.ok((real[name]?.length ?? 0) > 0, `${name}: real samples (${real[name]?.length ?? 0})`);
  });

  it('every yes is a yes of zod with an equal result: real data, each damaged once at random, against every schema', () => {
    const named = Object.entries(real).flatMap(([name, vs]) => vs.map((v) => ({ name, v })));
    let yes = 0;
    let no = 0;
    fc.assert(
      fc.property(fc.nat({ max: named.length - 1 }), fc.nat(), damageArb, (i, p, d) => {
        const { name, v } = named[i]!;
        const all = paths(v);
        const bad = damaged(v, all[p % all.length]!, d);
        if (agrees(name, SCHEMAS.find(([n]) => n === name)![1], bad)) yes++;
        else no++;
        for (const [other, schema] of SCHEMAS) agrees(other, schema, bad);
      }),
      { numRuns: 1500 },
    );
    // Not vacuous: many damaged values are still valid (a string for a string) and taken; many are not.
    assert.ok(yes > 100 && no > 300, `the fast path took ${yes} damaged values and left ${no} to zod`);
  });

  it('every yes is a yes of zod with an equal result: each leaf of real data damaged in turn (numbers made odd, strings emptied or retyped, keys dropped or added)', () => {
    let tried = 0;
    for (const [name, values] of Object.entries(real)) {
      const schema = SCHEMAS.find(([n]) => n === name)![1];
      for (const v of values.slice(0, 40)) {
        for (const at of paths(v)) {
          const leaf = at.reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], v);
          const damages: Damage[] =
            typeof leaf === 'number'
              ? [NaN, Infinity, -Infinity, -1, 0.5, 2 ** 60, -0, '1'].map((value) => ({ kind: 'replace', value }))
              : typeof leaf === 'string'
                ? ['', 'x'.repeat(300), 1, null].map((value) => ({ kind: 'replace', value }))
                : [{ kind: 'add', key: 'unexpected', value: 1 }, { kind: 'wrap' }, { kind: 'replace', value: null }];
          if (at.length > 0) damages.push({ kind: 'drop' });
          for (const d of damages) {
            agrees(name, schema, damaged(v, at, d));
            tried++;
          }
        }
      }
    }
    assert.ok(tried > 5000, `${tried} damaged values`);
  });

  it('every yes is a yes of zod with an equal result: arbitrary values', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.jsonValue()), (v) => {
        for (const [name, schema] of SCHEMAS) agrees(name, schema, v);
      }),
      { numRuns: 1500 },
    );
  });

  it('says "not sure" (zod decides) where zod would change the value: a key zod strips, a key JSON.parse makes own', () => {
    const rec = real.CheckpointRecord![0] as Record<string, unknown>;
    const extra = { ...rec, unexpected: 1 };
    assert.equal(fastValid(api.CheckpointRecord)(extra), false);
    assert.deepEqual(api.CheckpointRecord.parse(extra), rec, 'zod strips it');
    const proto = JSON.parse(`{"__proto__": {"x": 1}, ${JSON.stringify(rec).slice(1)}`);
    assert.equal(fastValid(api.CheckpointRecord)(proto), false);
    const msg = real.ChatMessage![0] as Record<string, unknown>;
    assert.equal(fastValid(api.ChatMessage)({ ...msg, extra: 'kept' }), true, 'a loose object keeps unknown keys: yes');
    assert.equal(fastValid(api.ChatMessage)({ ...msg, role: 'robot' }), false);
    assert.equal(fastValid(api.ToolExecutionRecord)({ ...(real.ToolExecutionRecord![0] as object), step: 1.5 }), false);
  });
});
