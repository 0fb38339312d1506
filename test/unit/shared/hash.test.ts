// sha256 names blobs and checks store files: whichever digest it uses, the hex must be the one
// createHash gives, for text as UTF-8 (lone surrogates included) and for bytes.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { sha256 } from '../../../src/common/hash';

const reference = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

describe('shared sha256', () => {
  it('is the standard digest: the known vector, and createHash’s hex for any text or bytes', () => {
    assert.equal(sha256('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(sha256(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    for (const text of ['é', '\u{1F600}', '\uD800', 'a\uDC00b', 'x'.repeat(100_000)])
      assert.equal(sha256(text), reference(text), JSON.stringify(text.slice(0, 8)));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.uint8Array()), (data) => {
        assert.equal(sha256(data), reference(data));
      }),
      { numRuns: 500 },
    );
  });
});
