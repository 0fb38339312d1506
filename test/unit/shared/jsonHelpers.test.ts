// The store's hot-path helpers must be exact stand-ins for what they replaced: jsonEqual for
// `JSON.stringify(a) === JSON.stringify(b)`, merged for an object spread `{ ...a, ...b }`; copyJson copies
// exactly.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { jsonEqual } from '../../../src/common/json';
import { copyJson, merged, toJsonData } from '../../../src/store/core/copy';
import { reverseKeys } from '../../support/json';

/** JSON data with some near-misses: shared keys, equal-looking numbers, "__proto__" keys. */
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(null, true, false, 0, -0, 1, 1.5, '', 'a', '0', '__proto__'),
    fc.string(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c', '__proto__', 'constructor', 'x y'), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('shared JSON helpers of the store', () => {
  it('jsonEqual(a, b) is exactly JSON.stringify(a) === JSON.stringify(b), key order included', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        assert.equal(jsonEqual(a, b), JSON.stringify(a) === JSON.stringify(b));
        assert.equal(jsonEqual(a, structuredClone(a)), true);
        const r = reverseKeys(a);
        assert.equal(jsonEqual(a, r), JSON.stringify(a) === JSON.stringify(r));
      }),
      { numRuns: 2000 },
    );
  });

  it('jsonEqual agrees with JSON.stringify on what is not plain JSON data', () => {
    const cases: [unknown, unknown][] = [
      [NaN, null],
      [NaN, NaN],
      [NaN, -Infinity],
      [1, NaN],
      [0, -0],
      [true, 'true'],
      [Infinity, null],
      [[undefined], [null]],
      [{ a: undefined, b: 1 }, { b: 1 }],
      [{ a: 1 }, { a: 1, b: undefined }],
      [new Date(0), new Date(0).toISOString()],
      [{ toJSON: () => 1 }, 1],
      [undefined, null],
      [1, '1'],
      [[1], { 0: 1 }],
    ];
    for (const [a, b] of cases) {
      assert.equal(jsonEqual(a, b), JSON.stringify(a) === JSON.stringify(b), `${String(a)} / ${String(b)}`);
      assert.equal(jsonEqual(b, a), JSON.stringify(b) === JSON.stringify(a), `${String(b)} / ${String(a)}`);
    }
  });

  it('merged(a, b, …) is { ...a, ...b, … }: the same keys, order and values, a "__proto__" key kept as a key', () => {
    const obj = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd', '__proto__', 'toString'), fc.jsonValue(), {
      maxKeys: 5,
    });
    fc.assert(
      fc.property(fc.array(fc.option(obj, { nil: null }), { maxLength: 4 }), (parts) => {
        const got = merged<Record<string, unknown>>(...parts);
        const want = parts.reduce<Record<string, unknown>>((acc, p) => ({ ...acc, ...p }), {});
        assert.deepEqual(Object.keys(got), Object.keys(want));
        assert.equal(JSON.stringify(got), JSON.stringify(want));
        assert.equal(Object.getPrototypeOf(got), Object.prototype, 'the prototype is never set from data');
      }),
      { numRuns: 1000 },
    );
    const hostile = JSON.parse('{"__proto__": {"polluted": true}}') as object;
    const m = merged<Record<string, unknown>>({ a: 1 }, hostile);
    assert.equal((m as { polluted?: unknown }).polluted, undefined);
    assert.deepEqual(Object.keys(m), ['a', '__proto__']);
  });

  it('copyJson and toJsonData copy JSON data exactly: a "__proto__" key (a model can write one in tool arguments) stays a key, never a prototype', () => {
    fc.assert(
      fc.property(json, (v) => {
        const c = copyJson(v);
        assert.equal(JSON.stringify(c), JSON.stringify(v));
      }),
      { numRuns: 1000 },
    );
    const hostile = JSON.parse('{"args": {"__proto__": {"command": "rm -rf ~"}, "path": "a.ts"}}') as {
      args: Record<string, unknown>;
    };
    const c = copyJson(hostile);
    assert.equal(JSON.stringify(c), JSON.stringify(hostile));
    assert.deepEqual(Object.keys(c.args), ['__proto__', 'path']);
    assert.equal(Object.getPrototypeOf(c.args), Object.prototype, 'the prototype is never set from data');
    assert.equal((c.args as { command?: unknown }).command, undefined, 'nothing inherited from the data');
    // and caller input taken at the store's edge, the same way
    const t = toJsonData(hostile, 'input') as typeof hostile;
    assert.deepEqual(Object.keys(t.args), ['__proto__', 'path']);
    assert.equal((t.args as { command?: unknown }).command, undefined);
  });
});
