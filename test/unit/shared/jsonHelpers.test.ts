// The store's hot-path helpers must be exact stand-ins for what they replaced: jsonEqual for
// `JSON.stringify(a) === JSON.stringify(b)`, merged for an object spread `{ ...a, ...b }`; copyJson copies
// exactly.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isExactly, jsonEqual } from '../../../src/common/json';
import { InvalidInputError } from '../../../src/store/api/errors';
import { asciiJson } from '../../../src/store/disk/frame';
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
      [null, { a: 1 }],
      [null, []],
      [null, [null]],
      [null, { toJSON: () => null }],
      [null, Object.assign(Object.create(null) as object, { a: 1 })],
      [null, new Date(0)],
    ];
    const say = (v: unknown) => JSON.stringify(v) ?? String(v);
    for (const [a, b] of cases) {
      assert.equal(jsonEqual(a, b), JSON.stringify(a) === JSON.stringify(b), `${say(a)} / ${say(b)}`);
      assert.equal(jsonEqual(b, a), JSON.stringify(b) === JSON.stringify(a), `${say(b)} / ${say(a)}`);
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

  it('toJsonData copies what it takes and refuses what is not JSON data, naming where (fast path and the one that names)', () => {
    fc.assert(
      fc.property(json, (v) => {
        const t = toJsonData(v, 'input');
        assert.equal(JSON.stringify(t), JSON.stringify(v));
        if (v !== null && typeof v === 'object') assert.notEqual(t, v, "a copy, not the caller's object");
      }),
      { numRuns: 1000 },
    );
    const refused: [unknown, RegExp][] = [
      [{ a: [1, { b: NaN }] }, /^input\.a\[1\]\.b is not a finite number$/],
      [{ a: { f: () => 1 } }, /^input\.a\.f is not JSON data \(a function\)$/],
      [[1, 2n], /^input\[1\] is not JSON data \(a bigint\)$/],
      [{ when: new Date(0) }, /^input\.when is not JSON data \(a Date\)$/],
      [{ m: new Map() }, /^input\.m is not JSON data \(a Map\)$/],
      [{ s: Symbol('x') }, /^input\.s is not JSON data \(a symbol\)$/],
    ];
    const cyclic: Record<string, unknown> = { a: { b: [] } };
    (cyclic.a as { b: unknown[] }).b.push(cyclic);
    refused.push([cyclic, /^input\.a\.b\[0\] refers to itself \(a cycle\)$/]);
    for (const [v, message] of refused)
      assert.throws(
        () => toJsonData(v, 'input'),
        (e: unknown) => e instanceof InvalidInputError && message.test(e.message),
      );
    // undefined members are dropped, undefined items become null (as JSON does)
    assert.deepEqual(toJsonData({ a: undefined, b: [undefined, 1] }, 'input'), { b: [null, 1] });
    // a tree deeper than the fast path goes is still copied (not taken for a cycle), and shared
    // subtrees that are not cycles are copied twice
    let deep: unknown = 'leaf';
    for (let i = 0; i < 2000; i++) deep = { d: deep };
    assert.equal(JSON.stringify(toJsonData(deep, 'input')), JSON.stringify(deep));
    const shared = { x: 1 };
    assert.deepEqual(toJsonData({ a: shared, b: [shared] }, 'input'), { a: { x: 1 }, b: [{ x: 1 }] });
  });

  it('isExactly(input, stored) only says yes when input is stored, as JSON data, member for member and in order', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        const stored = toJsonData(b, 'stored');
        if (isExactly(a, stored)) assert.equal(JSON.stringify(a), JSON.stringify(stored));
        assert.equal(isExactly(structuredClone(stored), stored), true);
        const r = reverseKeys(stored);
        assert.equal(isExactly(r, stored), JSON.stringify(r) === JSON.stringify(stored));
      }),
      { numRuns: 2000 },
    );
    // near misses that serialise alike: not sure, so no
    const holey: unknown[] = [1];
    holey[2] = 3; // (a hole at 1)
    const notSure: [unknown, unknown][] = [
      [{ a: 1, b: undefined }, { a: 1 }],
      [[undefined], [null]],
      [NaN, null],
      [{ toJSON: () => 1 }, 1],
      [new Date(0), new Date(0).toISOString()],
      [Object.assign(Object.create({ inherited: 1 }) as object, { a: 1 }), { a: 1 }],
      [holey, [1, null, 3]],
      [
        { b: 1, a: 2 },
        { a: 2, b: 1 },
      ],
    ];
    for (const [input, stored] of notSure) assert.equal(isExactly(input, stored), false, JSON.stringify(stored));
  });

  it('asciiJson escapes every character from U+007F on, and leaves ASCII text as it is', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const text = JSON.stringify(s);
        const a = asciiJson(text);
        const below7f = (t: string) => [...t].every((c) => c.charCodeAt(0) < 0x7f);
        assert.ok(below7f(a), 'one byte a character, none from U+007F on');
        assert.equal(JSON.parse(a), s);
        if (below7f(text)) assert.equal(a, text);
      }),
      { numRuns: 2000 },
    );
    assert.equal(asciiJson('"a\u007fb"'), '"a\\u007fb"');
    assert.equal(asciiJson('"é"'), '"\\u00e9"');
    assert.equal(asciiJson('"😀"'), '"\\ud83d\\ude00"');
  });
});
