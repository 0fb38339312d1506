// The compact encoding of a run's commits (src/store/disk/codec.ts): decoding is the exact inverse
// of encoding — every value — for any sequence of commits, and each of its
// space optimisations writes what it promises (a result as its intent's difference, the run
// context's changed keys, implied fields left out).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { advance, decodeOps, encodeOps, newCodec, peekBody, peekCalls } from '../../../src/store/disk/codec';
import type { CommitOp } from '../../../src/store/core/storedSchema';
import * as h from './helpers';

const meta = h.runMeta();

const json = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

/**
 * Encodes the commits in turn, each through JSON as on disk, and decodes them in turn: what was
 * written, what comes back. From commit `reloadAt` on, the writer goes on from what a load of the
 * commits before it computes (as after a reload or a crash), not from its own encoding's state.
 */
function roundTrip(commits: CommitOp[][], reloadAt = -1): { written: string[]; read: unknown[] } {
  let enc = newCodec();
  const dec = newCodec();
  const written: string[] = [];
  const read: unknown[] = [];
  for (const [i, ops] of commits.entries()) {
    if (i === reloadAt) {
      enc = newCodec();
      for (const text of written) advance(enc, decodeOps(JSON.parse(text) as unknown[], enc, meta));
    }
    const e = encodeOps(ops, enc, meta);
    advance(enc, e.next);
    const text = JSON.stringify(e.ops);
    written.push(text);
    const parsed = JSON.parse(text) as unknown[];
    advance(dec, decodeOps(parsed, dec, meta));
    read.push(parsed);
  }
  return { written, read };
}

const effect = (id: string, step: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  run_id: 'r1',
  tool_call_id: id,
  step,
  tool_name: 'run_command',
  input_hash: 'a'.repeat(64),
  idempotency_key: `r1/${step}/${id}`,
  side_effecting: true,
  intent_ms: 1000 + step,
  result: null,
  checkpoint_seq: step,
  ...extra,
});
const result = (output: string) => ({
  output,
  output_hash: 'b'.repeat(64),
  is_error: false,
  blob: null,
  finished_ms: 5000,
});

const header = (step: number, context: Record<string, unknown>) => ({
  step,
  state: 'running',
  context,
  llm_calls: step,
  tool_calls: step,
  started_at_s: 1,
  usage: { input_tokens: step, output_tokens: step, total_tokens: 2 * step },
  total_cost_usd: null,
  session_token: null,
  checkpoint_token: null,
  pending_llm_response: null,
  requested_model: 'm',
  normalized_model: 'm',
  provider_adapter: 'openai',
  final_text: '',
  final_structured: null,
  replayed_effect_count: 0,
  message_count: 0,
  tool_execution_count: 0,
  subagent_execution_count: 0,
});

const record = (seq: number, snapshot: unknown, over: Record<string, unknown> = {}) =>
  ({
    op: 'record',
    record: {
      run_id: 'r1',
      thread_id: 'r1',
      schema_version: 2,
      phase: snapshot ? 'step_started' : 'pre_llm',
      seq,
      timestamp_ms: 10 * seq,
      step: seq,
      parent: seq > 1 ? { run_id: 'r1', seq: seq - 1 } : null,
      payload: {},
      snapshot,
      ...over,
    },
  }) as unknown as CommitOp;

describe('store: the compact encoding of commits', () => {
  it('a result is written as its difference from its intent, and read back whole', () => {
    const intent = { op: 'effect', effect: effect('c1', 3) } as unknown as CommitOp;
    const done = { op: 'effect', effect: effect('c1', 3, { result: result('ok') }) } as unknown as CommitOp;
    const { written, read } = roundTrip([[intent], [done]]);
    assert.deepEqual(JSON.parse(written[1]!), [{ op: 'effect', effect: { $delta_of: 'c1', result: result('ok') } }]);
    // The run id and the idempotency key the run gives every call are left out of the intent too.
    assert.ok(!written[0]!.includes('idempotency_key') && !written[0]!.includes('"run_id"'), written[0]);
    assert.deepEqual(read[0], json([intent]));
    assert.deepEqual(read[1], json([done]));
  });

  it('a field the intent had that the result drops is written whole; fields in another order still as a difference', () => {
    const intent = { op: 'effect', effect: effect('c1', 3, { process: { pid: 7, hostname: 'h', started_ms: 1 } }) };
    const { process: _p, result: _r, ...rest } = intent.effect;
    const dropped = { op: 'effect', effect: { ...rest, result: result('x') } };
    const reordered = { op: 'effect', effect: { result: result('y'), ...rest, process: intent.effect.process } };
    const { written, read } = roundTrip([[intent], [dropped], [reordered]] as unknown as CommitOp[][]);
    assert.ok(!written[1]!.includes('$delta_of') && written[2]!.includes('$delta_of'));
    assert.deepEqual(read[1], json([dropped]));
    assert.deepEqual(read[2], json([reordered]));
  });

  it('the run context is written as the keys that changed in it; a context that changed its keys is written whole', () => {
    const ctx = { workspace_root: '/w', budget: { max_steps: null }, active_ms: 1, tool_schema_hash: 'h'.repeat(64) };
    const commits = [
      [record(1, header(1, ctx))],
      [record(2, header(2, { ...ctx, active_ms: 2 }))],
      [
        record(
          3,
          header(3, { active_ms: 3, workspace_root: '/w', budget: ctx.budget, tool_schema_hash: ctx.tool_schema_hash }),
        ),
      ], // same keys, another order
      [record(4, header(4, { ...ctx, active_ms: 4, extra: true }))],
    ];
    const { written, read } = roundTrip(commits);
    const snap = (i: number) =>
      (JSON.parse(written[i]!) as { record: { snapshot: Record<string, unknown> } }[])[0]!.record.snapshot;
    assert.deepEqual(snap(1).$changed_in, { context: { active_ms: 2 } });
    assert.equal(snap(1).context, undefined);
    assert.ok(snap(2).context && !snap(2).$changed_in, 'another key order: whole');
    assert.ok(snap(3).context && !snap(3).$changed_in, 'another key: whole');
    // Records leave out their schema_version, a null snapshot and what their position implies.
    assert.ok(!written[1]!.includes('schema_version') && !written[1]!.includes('"parent"'), written[1]);
    for (let i = 0; i < commits.length; i++) assert.deepEqual(read[i], json(commits[i]), `commit ${i + 1}`);
  });

  it("a payload is written as its difference from its phase's last, a time as the time since the last record, a tool execution as what its effect does not say", () => {
    const intent = { op: 'effect', effect: effect('c1', 1) };
    const done = { op: 'effect', effect: effect('c1', 1, { result: result('ok') }) };
    const exec = {
      tool_call_id: 'c1',
      tool_name: 'run_command',
      step: 1,
      input_hash: 'a'.repeat(64),
      output_hash: 'b'.repeat(64),
      is_error: false,
      replayed: false,
      started_ms: 7,
      finished_ms: 9,
    };
    const llm = (seq: number, tokens: number) =>
      record(seq, null, {
        phase: 'pre_llm',
        timestamp_ms: 1_795_555_295_000 + seq * 3,
        payload: { model: 'gpt-4.1-mini', provider: 'openai', message_count: tokens },
      });
    const commits = [
      [llm(1, 5), intent],
      [done, { ...llm(2, 7), lists: { tool_executions: { base: 0, items: [exec] } } }],
      [llm(3, 9)],
    ] as unknown as CommitOp[][];
    const { written, read } = roundTrip(commits);
    const second = JSON.parse(written[1]!) as {
      record: Record<string, unknown>;
      lists: { tool_executions: { items: unknown[] } };
    }[];
    assert.deepEqual(second[1]!.record.$payload_changed, { message_count: 7 });
    assert.equal(second[1]!.record.$dt, 3);
    assert.equal(second[1]!.record.payload, undefined);
    assert.equal(second[1]!.record.timestamp_ms, undefined);
    assert.deepEqual(second[1]!.lists.tool_executions.items, [
      { $effect: 'c1', replayed: false, started_ms: 7, finished_ms: 9 },
    ]);
    commits.forEach((ops, i) => assert.deepEqual(read[i], json(ops), `commit ${i + 1}`));
  });

  it('any sequence of commits reads back exactly, whatever the context, payloads, times and effects hold, and a writer reloaded midway', () => {
    const key = fc.oneof(
      fc.constantFrom(
        'active_ms',
        'budget',
        '__proto__',
        '$same_as_previous',
        '$changed_in',
        '$delta_of',
        '$payload_changed',
        '$dt',
        '$effect',
        'x',
      ),
      fc.string({ maxLength: 6 }),
    );
    const value = fc.oneof(
      fc.integer(),
      fc.string({ maxLength: 8 }),
      fc.constant(null),
      fc.boolean(),
      fc.array(fc.nat(), { maxLength: 3 }),
    );
    const context = fc.dictionary(key, value, { maxKeys: 5 }).map((d) => json(d) as Record<string, unknown>);
    const step = fc.record({
      context,
      // Most steps keep the previous context's keys and change some values (as the runner's does).
      keepKeys: fc.boolean(),
      changes: fc.array(fc.option(value, { nil: undefined }), { maxLength: 5 }),
      snapshot: fc.boolean(),
      phase: fc.constantFrom('pre_llm', 'post_llm', 'run_terminal'),
      payloadKeepKeys: fc.boolean(),
      timestamp: fc.oneof(fc.integer(), fc.constant(2 ** 53 + 2), fc.double({ noNaN: true, noDefaultInfinity: true })),
      schemaVersion: fc.constantFrom(1, 2),
      parentImplied: fc.boolean(),
      calls: fc.array(
        fc.record({
          id: fc.constantFrom('c1', 'c2', 'c3', '__proto__'),
          done: fc.boolean(),
          reorder: fc.boolean(),
          output: fc.string({ maxLength: 80 }),
          keyImplied: fc.boolean(),
          // Its tool execution item: absent, agreeing with the effect, or not.
          exec: fc.constantFrom('none', 'agrees', 'other name', 'other hash'),
        }),
        { maxLength: 3 },
      ),
    });
    const seen = { delta: 0, changedIn: 0, payload: 0, dt: 0, effect: 0 };
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), fc.nat(12), (steps, reloadAt) => {
        let ctx: Record<string, unknown> | null = null;
        const payloads = new Map<string, Record<string, unknown>>();
        const commits: CommitOp[][] = steps.map((s, i) => {
          const seq = i + 1;
          const prev: Record<string, unknown> | null = ctx;
          ctx =
            s.keepKeys && prev
              ? Object.fromEntries(Object.entries(prev).map(([k, v], j) => [k, s.changes[j] ?? v]))
              : s.context;
          const ops: unknown[] = s.calls.map((c) => {
            const e: Record<string, unknown> = effect(c.id, seq, c.done ? { result: result(c.output) } : {});
            if (!c.keyImplied) e.idempotency_key = `other/${c.id}`;
            return { op: 'effect', effect: c.reorder ? { result: e.result, ...e } : e };
          });
          const before = payloads.get(s.phase);
          const payload =
            s.payloadKeepKeys && before
              ? Object.fromEntries(Object.entries(before).map(([k, v], j) => [k, s.changes[j] ?? v]))
              : { ...ctx, n: seq };
          payloads.set(s.phase, payload);
          const items = s.calls
            .filter((c) => c.exec !== 'none')
            .map((c) => ({
              tool_call_id: c.id,
              tool_name: c.exec === 'other name' ? 'read_file' : 'run_command',
              step: seq,
              input_hash: 'a'.repeat(64),
              output_hash: c.done ? (c.exec === 'other hash' ? 'c'.repeat(64) : 'b'.repeat(64)) : null,
              is_error: false,
              replayed: false,
              started_ms: seq,
              finished_ms: c.done ? seq + 1 : null,
            }));
          const rec = record(seq, s.snapshot ? header(seq, ctx) : null, {
            schema_version: s.schemaVersion,
            phase: s.phase,
            payload,
            timestamp_ms: s.timestamp,
            ...(s.parentImplied ? {} : { parent: null }),
          });
          ops.push(items.length ? { ...rec, lists: { tool_executions: { base: 0, items } } } : rec);
          return json(ops) as CommitOp[];
        });
        const { written, read } = roundTrip(commits, reloadAt);
        commits.forEach((ops, i) => assert.deepEqual(read[i], ops, `commit ${i + 1}`));
        for (const w of written) {
          if (w.includes('"$delta_of"')) seen.delta++;
          if (w.includes('"$changed_in"')) seen.changedIn++;
          if (w.includes('"$payload_changed"')) seen.payload++;
          if (w.includes('"$dt"')) seen.dt++;
          if (w.includes('"$effect"')) seen.effect++;
        }
      }),
      { numRuns: 400 },
    );
    // The cases the encoding shortens were among them.
    assert.ok(
      Object.values(seen).every((n) => n > 50),
      JSON.stringify(seen),
    );
  });

  it('a lost commit whose result is written as a difference is still read for the damage report', () => {
    const enc = newCodec();
    const first = encodeOps([{ op: 'effect', effect: effect('c1', 3) } as unknown as CommitOp], enc, meta);
    advance(enc, first.next);
    const lost = encodeOps(
      [{ op: 'effect', effect: effect('c1', 3, { result: result('ok') }) } as unknown as CommitOp],
      enc,
      meta,
    );
    // The reader decoded the first commit (its codec knows the intent); the second is lost and only peeked at.
    const dec = newCodec();
    advance(dec, decodeOps(json(first.ops) as unknown[], dec, meta));
    const peeked = peekBody({ run_id: 'r1', ops: json(lost.ops) }, 'r1', peekCalls(dec));
    assert.deepEqual(peeked?.calls, [
      { tool_call_id: 'c1', tool_name: 'run_command', input_hash: 'a'.repeat(64), step: 3, finished: true },
    ]);
  });

  it('a difference whose call the log does not have makes the commit bad, never a guess', () => {
    assert.throws(
      () => decodeOps([{ op: 'effect', effect: { $delta_of: 'nope', result: result('x') } }], newCodec(), meta),
      /call nope the log does not have/,
    );
    const prev = newCodec();
    advance(prev, decodeOps(json([record(1, header(1, { a: 1 }))]) as unknown[], prev, meta));
    assert.throws(
      () =>
        decodeOps(
          [
            {
              op: 'record',
              record: { seq: 2, step: 2, snapshot: { $same_as_previous: true, $changed_in: { usage2: { a: 2 } } } },
            },
          ],
          prev,
          meta,
        ),
      /lists changes in usage2/,
    );
    // A snapshot left out reads as null; one that is there but no object stays as it is, for the schema to refuse.
    for (const bad of [0, false, '', []]) {
      const ops = [{ op: 'record', record: { seq: 1, step: 1, phase: 'pre_llm', payload: {}, snapshot: bad } }];
      decodeOps(ops, newCodec(), meta);
      assert.deepEqual(ops[0]!.record.snapshot, bad);
    }
    const left = [
      { op: 'record', record: { seq: 1, step: 1, phase: 'pre_llm', payload: {} } as Record<string, unknown> },
    ];
    decodeOps(left, newCodec(), meta);
    assert.equal(left[0]!.record.snapshot, null);
  });
});
