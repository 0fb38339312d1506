import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  canonicalJson,
  idempotencyKey,
  inputHash,
  inputHashFromRaw,
  outputHash,
  sha256,
} from '../../../src/runner/hash';
import { reverseKeys } from '../../support/json';

describe('runner/hash', () => {
  it('canonicalJson sorts keys at every depth and has no whitespace', () => {
    assert.equal(
      canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } }),
      '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('canonicalJson follows JSON.stringify for undefined, non-finite numbers and toJSON', () => {
    assert.equal(
      canonicalJson({ a: undefined, b: [undefined, NaN, Infinity], c: new Date(0) }),
      '{"b":[null,null,null],"c":"1970-01-01T00:00:00.000Z"}',
    );
    assert.equal(canonicalJson(undefined), 'null');
    assert.equal(canonicalJson('é\n'), JSON.stringify('é\n'));
  });

  it('canonicalJson refuses circular structures and BigInt', () => {
    const o: Record<string, unknown> = {};
    o.self = o;
    assert.throws(() => canonicalJson(o), /circular/);
    assert.throws(() => canonicalJson({ n: 1n }), /BigInt/);
  });

  it('canonicalJson is valid JSON that parses back to the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        assert.deepEqual(JSON.parse(canonicalJson(v)), JSON.parse(JSON.stringify(v)));
      }),
    );
  });

  it('key order never changes the input hash (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.dictionary(fc.string(), fc.jsonValue()), (name, args) => {
        assert.equal(inputHash(name, args), inputHash(name, reverseKeys(args)));
        // …and the raw form with different spacing hashes the same as the parsed form.
        assert.equal(inputHashFromRaw(name, JSON.stringify(reverseKeys(args), null, 2)), inputHash(name, args));
      }),
    );
  });

  it('different arguments or a different tool give a different hash', () => {
    assert.notEqual(inputHash('read_file', { path: 'a' }), inputHash('read_file', { path: 'b' }));
    assert.notEqual(inputHash('read_file', { path: 'a' }), inputHash('write_file', { path: 'a' }));
    // The name/args separator prevents "ab"+{} colliding with "a"+"b…".
    assert.equal(inputHash('t', { x: 1 }), sha256('t\n{"x":1}'));
  });

  it('raw arguments: empty means {}, broken JSON still hashes stably', () => {
    assert.equal(inputHashFromRaw('list_files', ''), inputHash('list_files', {}));
    const broken = '{"path": "src';
    assert.equal(inputHashFromRaw('read_file', broken), inputHashFromRaw('read_file', broken));
    assert.equal(inputHashFromRaw('read_file', broken), sha256('read_file\n' + broken));
  });

  it('output hash is sha256 of the output; idempotency key is run/step/call', () => {
    assert.equal(outputHash('hello'), '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824');
    assert.equal(idempotencyKey('run1', 3, 'call_x'), 'run1/3/call_x');
  });
});
