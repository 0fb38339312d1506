// The durable lowdb adapter: envelope + checksum, missing vs corrupt, newer versions, migrations.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Low } from 'lowdb';
import { z } from 'zod';
import { sha256 } from '../../../src/common/hash';
import { DurableJsonFile, decodeEnvelope, encodeEnvelope } from '../../../src/store/disk/durableFile';
import { AgentCheckpointCorruptionError, SchemaVersionError } from '../../../src/store/api/errors';
import { nodeFs } from '../../../src/store/disk/fsLayer';
import { MigrationGapError, migrate, type Migration } from '../../../src/store/core/migrations';
import { rejects, tmpDir } from './helpers';

const Doc = z.object({ n: z.number(), s: z.string() });

describe('store: durable lowdb adapter', () => {
  let dir: string;
  beforeEach(() => (dir = tmpDir()));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = () => new DurableJsonFile(nodeFs, path.join(dir, 'doc.json'), 'lock', Doc);

  it('works as a lowdb adapter: Low.write then a fresh Low.read returns the data', async () => {
    const db = new Low(file(), { n: 0, s: '' });
    db.data = { n: 42, s: 'héllo "quoted"\n' };
    await db.write();
    const again = new Low(file(), { n: 0, s: '' });
    await again.read();
    assert.deepEqual(again.data, { n: 42, s: 'héllo "quoted"\n' });
    const text = fs.readFileSync(path.join(dir, 'doc.json'), 'utf8');
    const body = String.raw`{"n":42,"s":"h\u00e9llo \"quoted\"\n"}`; // non-ASCII is written as \u escapes
    assert.equal(text, `{"schema_version":2,"kind":"lock","sha256":"${sha256(body)}","body":${body}}\n`);
    assert.ok(
      [...text].every((c) => c.charCodeAt(0) < 128),
      'the file is pure ASCII',
    );
    assert.deepEqual(fs.readdirSync(dir), ['doc.json'], 'no temp file left behind');
  });

  it('returns null only for a missing file', async () => {
    assert.equal(await file().read(), null);
  });

  it('never reads an existing bad file as empty: every kind of damage is an error naming the file', async () => {
    await file().write({ n: 1, s: 'x'.repeat(100) });
    const good = fs.readFileSync(path.join(dir, 'doc.json'));
    const damage: Record<string, Buffer> = {
      empty: Buffer.alloc(0),
      truncated: good.subarray(0, good.length - 20),
      'zero-filled': Buffer.alloc(good.length),
      garbage: Buffer.from('{"not":"an envelope"}'),
      'bit-flip': Buffer.from(good.map((b, i) => (i === 120 ? b ^ 0x04 : b))),
      'other kind': Buffer.from(encodeEnvelope('index', { n: 1, s: 'x' })),
      'schema mismatch': Buffer.from(encodeEnvelope('lock', { n: 'one' })),
    };
    for (const [what, bytes] of Object.entries(damage)) {
      fs.writeFileSync(path.join(dir, 'doc.json'), bytes);
      const err = await rejects(file().read(), AgentCheckpointCorruptionError);
      assert.ok(err.message.includes('doc.json'), `${what}: ${err.message}`);
      assert.equal(err.file, path.join(dir, 'doc.json'));
    }
  });

  it('refuses a file from a newer version and leaves it untouched', async () => {
    const text = `{"schema_version":3,"kind":"lock","sha256":"${'0'.repeat(64)}","body":{"whatever":true}}`;
    fs.writeFileSync(path.join(dir, 'doc.json'), text);
    const err = await rejects(file().read(), SchemaVersionError, /newer/);
    assert.equal(err.found, 3);
    assert.equal(fs.readFileSync(path.join(dir, 'doc.json'), 'utf8'), text);
    assert.throws(
      () => decodeEnvelope(JSON.stringify({ schema_version: 7, other: 'layout' }), 'x.json', 'lock', null),
      SchemaVersionError,
    );
  });

  it('create() never replaces an existing file', async () => {
    await file().create({ n: 1, s: 'a' });
    await assert.rejects(file().create({ n: 2, s: 'b' }), (e: NodeJS.ErrnoException) => e.code === 'EEXIST');
    assert.deepEqual(await file().read(), { n: 1, s: 'a' });
  });

  it('applies the migration chain from → from+1 in order, and reports a gap', () => {
    const chain: Record<number, Migration> = {
      1: (_k, b) => ({ ...(b as object), v2: true }),
      2: (_k, b) => ({ ...(b as object), v3: (b as { v2: boolean }).v2 }),
    };
    assert.deepEqual(migrate('index', 1, { a: 1 }, 3, chain), { a: 1, v2: true, v3: true });
    assert.deepEqual(migrate('index', 2, { a: 1, v2: false }, 3, chain), { a: 1, v2: false, v3: false });
    assert.deepEqual(migrate('index', 2, { a: 1 }), { a: 1 }, 'the current version: nothing to do');
    assert.throws(() => migrate('index', 0, {}, 3, chain), MigrationGapError);
    assert.throws(() => migrate('index', 1, {}), MigrationGapError, 'format 1 has nothing to migrate from');
  });
});
