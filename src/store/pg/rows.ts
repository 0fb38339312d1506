// A commit as a row of the shared store: the same compact encoding as a segment frame on disk
// (disk/codec.ts, disk/commit.ts decode it), as text, with a sha256 over the run id, its commit
// numbers, its format version and the text — so a row that was altered, renumbered or copied from
// another run fails its check instead of being read.
import crypto from 'node:crypto';
import { AgentCheckpointCorruptionError, SchemaVersionError } from '../api/errors';
import type { RunMeta } from '../api/schema';
import type { CommitBody, CommitOp } from '../core/storedSchema';
import { encodeOps, type Codec, type CodecDelta } from '../disk/codec';
import { decodeCommit, isRawCommit, type RawCommit } from '../disk/commit';

export interface CommitRow {
  first: number;
  last: number;
  format: number;
  body: string;
  sha256: Buffer;
}

export function rowSha(runId: string, first: number, last: number, format: number, body: string): Buffer {
  return crypto.createHash('sha256').update(`${runId}\n${first}\n${last}\n${format}\n`).update(body).digest();
}

/**
 * A row's format (format 1 of the store: docs/format.md): the commit in the compact encoding of a disk
 * segment's frames (codec.ts: a result as its intent's difference, …). A row of any other format is
 * refused (SchemaVersionError), never misread or taken for damage.
 */
export const ROW_FORMAT = 3;

/** The row of commit(s) first..last; the first commit (and a compacted one) carries the meta. */
export function encodeRow(
  runId: string,
  range: { first: number; last: number },
  ops: readonly CommitOp[],
  codec: Codec,
  meta: RunMeta,
): { row: CommitRow; delta: CodecDelta } {
  const enc = encodeOps(ops, codec, meta);
  const body = JSON.stringify(range.first === 1 ? { meta, ops: enc.ops } : { ops: enc.ops });
  const format = ROW_FORMAT;
  return {
    row: { ...range, format, body, sha256: rowSha(runId, range.first, range.last, format, body) },
    delta: enc.next,
  };
}

/** Where a row is, for reports: the store has no files, so this names the table, the run and the commit. */
export const rowName = (schema: string, runId: string, first: number): string =>
  `postgres:${schema}.commits/${runId}/${first}`;

/** Checks and decodes one row against the log before it. Throws what is wrong, naming the row. */
export function readRow(
  runId: string,
  row: CommitRow,
  codec: Codec,
  meta: RunMeta,
  name: string,
): { body: CommitBody; delta: CodecDelta } {
  // Another writer may checksum differently: its rows are refused, not taken for damage.
  if (row.format !== ROW_FORMAT) throw new SchemaVersionError(name, row.format, ROW_FORMAT);
  if (!rowSha(runId, row.first, row.last, row.format, row.body).equals(row.sha256))
    throw new AgentCheckpointCorruptionError(`${name} is corrupt: its sha256 does not match its content`, runId, name);
  let parsed: unknown;
  try {
    parsed = JSON.parse(row.body);
  } catch (err) {
    throw new AgentCheckpointCorruptionError(`${name} is corrupt: ${(err as Error).message}`, runId, name);
  }
  const raw = { ...(parsed as object), run_id: runId, first: row.first, last: row.last } as RawCommit;
  if (!isRawCommit(raw)) throw new AgentCheckpointCorruptionError(`${name} is corrupt: not a commit`, runId, name);
  try {
    return decodeCommit(raw, codec, meta, name, runId);
  } catch (err) {
    if (err instanceof AgentCheckpointCorruptionError) throw err;
    throw new AgentCheckpointCorruptionError(`${name} is corrupt: ${(err as Error).message}`, runId, name);
  }
}

/** The meta a row carries (the first commit's), read without trusting the row. */
export function metaInRow(row: CommitRow): unknown {
  try {
    return (JSON.parse(row.body) as { meta?: unknown }).meta;
  } catch {
    return undefined;
  }
}
