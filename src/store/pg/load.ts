// Loading a run from the shared store: its meta, then its commit rows in order, each checked
// (sha256, format, decoding against the log before it) — the same chain rule as on disk. A row
// cannot be torn (every commit is one transaction), so a row that does not check out, a gap, or
// fewer rows than the run's committed count is lost acknowledged data: reported with what it held
// as far as it can be read, the bad rows copied to the quarantine table and removed by the run's
// holder, and the run falls back to its last good commit.
import { AgentCheckpointCorruptionError, SchemaVersionError } from '../api/errors';
import { RunMeta } from '../api/schema';
import type { CorruptionReport } from '../api/types';
import type { LoadOptions, LoadSink } from '../core/engine';
import { advance, newCodec, peekBody, type Codec } from '../disk/codec';
import { emptyPeek, lostTailReport, peekInto, Survived } from '../disk/commit';
import { metaInRow, readRow, rowName, type CommitRow } from './rows';

export interface RunRow {
  rid: string;
  meta: string;
  commits: number;
  covered: number;
}

export interface LoadedChain {
  meta: RunMeta;
  codec: Codec;
  /** The last good commit. */
  last: number;
  covered: number;
  report: CorruptionReport | null;
  /** Rows from this commit on are bad (to quarantine); null: none. */
  badFrom: number | null;
}

export function parseMeta(text: string, runId: string): RunMeta | null {
  try {
    const m = RunMeta.safeParse(JSON.parse(text));
    return m.success && m.data.run_id === runId ? m.data : null;
  } catch {
    return null;
  }
}

/** Feeds the sink the good prefix of the chain. Throws only when the run has no usable meta at all. */
export function loadChain(
  schema: string,
  runId: string,
  run: RunRow,
  rows: CommitRow[],
  sink: LoadSink,
  opts: Pick<LoadOptions, 'knownMeta'>,
): LoadedChain {
  const first = rows[0];
  const fromRow = first?.first === 1 ? parseMetaValue(metaInRow(first), runId) : null;
  const meta = parseMeta(run.meta, runId) ?? fromRow ?? opts.knownMeta ?? null;
  if (!meta) {
    const name = `postgres:${schema}.runs/${runId}`;
    throw new AgentCheckpointCorruptionError(`${name} is corrupt: its meta cannot be read`, runId, name);
  }
  sink.meta(meta);
  const codec = newCodec();
  const survived = new Survived();
  let expected = 1;
  let covered = 0;
  let bad: { at: number; name: string; reason: string } | null = null;
  for (const row of rows) {
    const name = rowName(schema, runId, row.first);
    if (row.first !== expected) {
      bad = { at: row.first, name, reason: `${name}: commits ${expected}–${row.first - 1} are missing` };
      break;
    }
    try {
      const { body, delta } = readRow(runId, row, codec, meta, name);
      sink.commit(body, name);
      advance(codec, delta);
      survived.add(body.ops);
      if (row.first !== row.last) covered = row.last;
      expected = row.last + 1;
    } catch (err) {
      if (err instanceof SchemaVersionError) throw err; // a newer writer: unreadable here, not damaged
      bad = { at: row.first, name, reason: (err as Error).message };
      break;
    }
  }
  const last = expected - 1;
  if (!bad && last < run.commits) {
    const name = rowName(schema, runId, expected);
    bad = { at: expected, name, reason: `${name} is missing: the run had committed ${run.commits} commits` };
  }
  if (!bad) return { meta, codec, last, covered, report: null, badFrom: null };
  const peeked = emptyPeek();
  for (const row of rows.filter((r) => r.first >= bad.at)) {
    let value: unknown;
    try {
      value = { ...(JSON.parse(row.body) as object), run_id: runId };
    } catch {
      value = null;
    }
    peekInto(peeked, peekBody(value, runId));
  }
  const report = lostTailReport({
    runId,
    file: bad.name,
    reason: bad.reason,
    quarantined: [],
    survived,
    witness: null,
    onDisk: Math.max(run.commits, ...rows.map((r) => r.last)),
    peeked,
  });
  return { meta, codec, last, covered, report, badFrom: bad.at };
}

function parseMetaValue(v: unknown, runId: string): RunMeta | null {
  const m = RunMeta.safeParse(v);
  return m.success && m.data.run_id === runId ? m.data : null;
}
