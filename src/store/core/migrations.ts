// Schema migrations, applied on read: a JSON document of the store (index.json, owner.lock, an
// export) written at schema_version v goes through MIGRATIONS[v], MIGRATIONS[v+1], … up to
// STORE_SCHEMA_VERSION. A read never rewrites a file; a version with no way forward (newer, or older
// than any migration) is refused (SchemaVersionError) and the file left untouched.
//
// Format 1 (docs/format.md) is the first that ships: there is nothing to migrate from yet. To change a
// stored shape after a release: bump STORE_SCHEMA_VERSION, add MIGRATIONS[previous] = (kind, body) =>
// newBody, and commit a fixture written by the released version, which must keep loading exactly.
// test/unit/store/format.test.ts proves the mechanism on a synthetic version-0 fixture.
import { STORE_SCHEMA_VERSION } from '../api/schema';

export type MigrationKind = 'index' | 'index_head' | 'lock' | 'export';

/** Turns a body of version `from` into a body of version `from + 1`. Must not mutate its input. */
export type Migration = (kind: MigrationKind, body: unknown) => unknown;

export const MIGRATIONS: Readonly<Record<number, Migration>> = {};

export class MigrationGapError extends Error {
  override name = 'MigrationGapError';
}

/** Applies the chain from `from` to `to`. `chain` is a parameter so the mechanism can be tested. */
export function migrate(
  kind: MigrationKind,
  from: number,
  body: unknown,
  to: number = STORE_SCHEMA_VERSION,
  chain: Readonly<Record<number, Migration>> = MIGRATIONS,
): unknown {
  let out = body;
  for (let v = from; v < to; v++) {
    const step = chain[v];
    if (!step) throw new MigrationGapError(`no migration from schema_version ${v} to ${v + 1} (${kind})`);
    out = step(kind, out);
  }
  return out;
}
