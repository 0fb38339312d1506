// A segment frame's short form (src/store/disk/frameKeys.ts, segment version 5): any commit body reads
// back exactly — keys of our own, keys of the caller's that look like short ones (then the long form),
// "__proto__", implied seq/step/checkpoint_seq and their absence — and a frame is bound to its run by
// its checksum.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { longBody, shortJson } from '../../../src/store/disk/frameKeys';
import { parseSegment } from '../../../src/store/disk/segment';
import { frameKey, frameOfJson, readFrame } from '../../../src/store/disk/frame';

const json = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;
const RUN = 'run-1';

/** The body as a segment of this version holds it (short, or long when it cannot be), read back. */
function roundTrip(n: number, meta: unknown, ops: unknown[]): { read: unknown; short: boolean } {
  const short = shortJson(n, meta, ops);
  // (valid JSON text, nothing JSON.stringify would have left out or written otherwise)
  if (short !== null) assert.equal(JSON.stringify(JSON.parse(short)), short);
  const text =
    short ?? JSON.stringify({ run_id: RUN, first: n, last: n, ...(meta === undefined ? {} : { meta }), ops });
  const frame = frameOfJson(text, frameKey(RUN).seed);
  const r = readFrame(frame, 0, { key: frameKey(RUN) });
  assert.ok(r.ok, 'the frame checks out against its run');
  return { read: r.frame.value, short: short !== null };
}

const expected = (n: number, meta: unknown, ops: unknown[]) =>
  json({ run_id: RUN, first: n, last: n, ...(meta === undefined ? {} : { meta }), ops });

describe('store: commit frames in short keys (segment version 5)', () => {
  it('a step’s commits read back exactly, in a fraction of the bytes, with seq, step and the intent’s checkpoint implied', () => {
    const ops = [
      { op: 'record', record: { phase: 'pre_tool_batch', seq: 7, step: 3, $dt: 0, payload: { tool_call_count: 1 } } },
      {
        op: 'effect',
        effect: {
          tool_call_id: 'call_1',
          step: 3,
          tool_name: 'run_command',
          input_hash: 'a'.repeat(64),
          side_effecting: true,
          intent_ms: 1000,
          result: null,
          checkpoint_seq: 7,
        },
      },
      {
        op: 'record',
        record: { phase: 'post_tool_batch', seq: 8, step: 3, $dt: 5, $payload_changed: { tool_calls_total: 4 } },
      },
      { op: 'state', state: 'running', detail: null, ms: 5 },
    ];
    const text = shortJson(9, undefined, ops)!;
    const short = JSON.parse(text) as unknown;
    // The exact text: its keys in the order they were given (what a header's difference is compared by).
    assert.equal(
      text,
      `{"n":9,"o":[{"R":{"A":4,"B":7,"C":3,"D":0,"F":{"G":1}}},{"E":{"B":"call_1","D":"run_command","E":"${'a'.repeat(64)}","F":true,"G":1000,"H":null}},{"R":{"A":5,"D":5,"G":{"M":4}}},{"op":"state","state":"running","detail":null,"ms":5}]}`,
    );
    assert.deepEqual(short, {
      n: 9,
      o: [
        { R: { A: 4, B: 7, C: 3, D: 0, F: { G: 1 } } },
        { E: { B: 'call_1', D: 'run_command', E: 'a'.repeat(64), F: true, G: 1000, H: null } },
        { R: { A: 5, D: 5, G: { M: 4 } } },
        { op: 'state', state: 'running', detail: null, ms: 5 },
      ],
    });
    assert.deepEqual(longBody(json(short) as Record<string, unknown>, RUN), expected(9, undefined, ops));
    assert.ok(JSON.stringify(short).length < 0.6 * JSON.stringify(expected(9, undefined, ops)).length);
  });

  it('any commit body reads back exactly; one holding a key that reads as a short one is written long', () => {
    const key = fc.oneof(
      fc.constantFrom('phase', 'seq', 'step', 'snapshot', 'payload', 'usage', 'context', 'result', 'items', 'base'),
      fc.constantFrom('__proto__', 'A', 'Z', 'o', 'n', 'op', '$delta_of', '$changed_in', 'message_count'),
      fc.string({ maxLength: 4 }),
    );
    const leaf = fc.oneof(fc.integer(), fc.string({ maxLength: 6 }), fc.constant(null), fc.boolean());
    const value = fc.oneof(leaf, fc.dictionary(key, leaf, { maxKeys: 3 }));
    const dict = fc.dictionary(key, value, { maxKeys: 4 });
    const header = fc.record(
      {
        $same_as_previous: fc.constant(true),
        step: fc.nat(9),
        usage: fc.record({ input_tokens: fc.nat(), output_tokens: fc.nat() }),
        pending_llm_response: fc.option(fc.record({ id: leaf, usage: dict, message: dict }), { nil: null }),
        $changed_in: fc.record({ context: dict, usage: dict }, { requiredKeys: [] }),
        context: dict,
      },
      { requiredKeys: [] },
    );
    const record = fc
      .record(
        {
          phase: fc.oneof(
            fc.constantFrom('step_started', 'post_llm', 'run_terminal', 'made_up'),
            fc.integer({ min: 0, max: 3 }),
          ),
          seq: fc.nat(12),
          step: fc.oneof(fc.nat(3), fc.constant(null)),
          $dt: fc.integer(),
          payload: dict,
          $payload_changed: dict,
          snapshot: fc.oneof(header, fc.constant(null)),
          extra: dict,
        },
        { requiredKeys: ['phase'] },
      )
      .map(({ extra, ...r }) => ({ ...extra, ...r }));
    const lists = fc.record(
      { messages: fc.record({ base: fc.nat(), items: fc.array(dict, { maxLength: 2 }) }), tool_executions: dict },
      { requiredKeys: [] },
    );
    const effect = fc
      .record(
        {
          $delta_of: fc.constantFrom('c1', '__proto__'),
          tool_call_id: fc.constantFrom('c1', 'c2'),
          step: fc.oneof(fc.nat(3), fc.constant(null)),
          checkpoint_seq: fc.oneof(fc.nat(12), fc.constant(null)),
          result: fc.oneof(fc.constant(null), dict),
          extra: dict,
        },
        { requiredKeys: [] },
      )
      .map(({ extra, ...e }) => ({ ...extra, ...e }));
    const op = fc.oneof(
      fc.record({ op: fc.constant('record'), record }),
      fc.record({ op: fc.constant('record'), record, lists }),
      fc.record({ op: fc.constant('effect'), effect }),
      fc.record({ op: fc.constantFrom('state', 'approval'), state: leaf }),
      dict,
      leaf,
    );
    const seen = { short: 0, long: 0 };
    fc.assert(
      fc.property(fc.nat(1000), fc.option(dict, { nil: undefined }), fc.array(op, { maxLength: 6 }), (n, meta, raw) => {
        const ops = json(raw) as unknown[];
        const m = meta === undefined ? undefined : json(meta);
        const { read, short } = roundTrip(n, m, ops);
        seen[short ? 'short' : 'long']++;
        assert.deepEqual(read, expected(n, m, ops));
      }),
      { numRuns: 400 },
    );
    assert.ok(seen.short > 50 && seen.long > 20, `both forms were written (${JSON.stringify(seen)})`);
  });

  it('a frame checks out only against its own run: under another run’s id it is a checksum mismatch', () => {
    const frame = frameOfJson(shortJson(1, undefined, [])!, frameKey(RUN).seed);
    const r = readFrame(frame, 0, { key: frameKey('run-2') });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.reason, 'checksum mismatch');
    // Read as a plain frame (no run), its checksum fails too: a commit frame is always the run's.
    assert.equal(readFrame(frame, 0, { key: null }).ok, false);
    // …but it counts as a valid frame that follows (a bad one before it is damage, not a torn tail).
    const segment = Buffer.concat([Buffer.from('9\t00000000\t{"bad":1}\n'), frame]);
    const parsed = parseSegment(segment, { runId: RUN, headless: true });
    assert.equal(parsed.stop?.torn, false);
  });
});
