// Schema migrations, applied on read: a file written at version v goes through MIGRATIONS[v],
// MIGRATIONS[v+1], … up to STORE_SCHEMA_VERSION. Files are never rewritten by a read; a newer file
// is refused (SchemaVersionError, in disk/durableFile.ts) and left untouched.
//
// To change a stored shape: bump STORE_SCHEMA_VERSION, add MIGRATIONS[old] = (kind, body) => newBody,
// and keep the committed fixtures (test/fixtures/store-v1/, store-v2/) loading exactly
// (test/unit/store/migration.test.ts).
import { STORE_SCHEMA_VERSION } from '../api/schema';

export type MigrationKind = 'commit' | 'run' | 'index' | 'lock' | 'export';

/** Turns a body of version `from` into a body of version `from + 1`. Must not mutate its input. */
export type Migration = (kind: MigrationKind, body: unknown) => unknown;

export const MIGRATIONS: Readonly<Record<number, Migration>> = {
  // 1 → 2 changed where commits live (disk/v1.ts reads the old layout; a run is converted when it is
  // next written), not what any file's body holds.
  1: (_kind, body) => body,
};

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
