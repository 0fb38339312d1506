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
import { advance, newCodec, peekBody, peekCalls, type Codec } from '../disk/codec';
import { emptyPeek, lostTailReport, peekInto, Survived } from '../disk/commit';
import type pg from 'pg';
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
  const calls = peekCalls(codec);
  for (const row of rows.filter((r) => r.first >= bad.at)) {
    let value: unknown;
    try {
      value = { ...(JSON.parse(row.body) as object), run_id: runId };
    } catch {
      value = null;
    }
    peekInto(peeked, peekBody(value, runId, calls));
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

export interface RowsCtx {
  q<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>>;
  S: string;
  schema: string;
  workspace: string;
}

/** The holder moves the bad rows (and everything after them) to the quarantine table, in one statement. */
export async function quarantineTail(
  c: RowsCtx,
  at: { runId: string; rid: string; token: string; from: number; last: number },
  report: CorruptionReport,
): Promise<CorruptionReport> {
  const moved = await c
    .q(
      `WITH run AS (UPDATE ${c.S}.runs SET commits = $4 WHERE rid = $1 AND lease_token = $2 RETURNING rid),
       gone AS (DELETE FROM ${c.S}.commits x USING run WHERE x.rid = run.rid AND x.first >= $3 RETURNING x.*)
       INSERT INTO ${c.S}.quarantine (workspace, run_id, what, body, reason)
       SELECT $5, $6, 'commit ' || first || '-' || last, body, $7 FROM gone ORDER BY first RETURNING id`,
      [at.rid, at.token, at.from, at.last, c.workspace, at.runId, report.reason],
    )
    .catch(() => null); // not moved: reported all the same, and moved by the next load that can
  if (!moved || moved.rowCount === 0) return report;
  const to = `postgres:${c.schema}.quarantine`;
  return { ...report, quarantined: [{ file: report.file, to, reason: report.reason }] };
}

/**
 * Applies the rows written after `st.cursor` by the run's holder, in order. 'reload' when they do
 * not continue the chain this window has (compacted by the holder, or a row that does not check
 * out: the full load then reports it).
 */
export function followRows(
  schema: string,
  runId: string,
  st: { cursor: number; next: number; codec: Codec; meta: RunMeta },
  rows: CommitRow[],
  sink: LoadSink,
): number | 'reload' {
  let n = 0;
  for (const row of rows) {
    if (row.first !== st.cursor + 1) return 'reload';
    const name = rowName(schema, runId, row.first);
    try {
      const { body, delta } = readRow(runId, row, st.codec, st.meta, name);
      sink.commit(body, name);
      advance(st.codec, delta);
    } catch {
      return 'reload';
    }
    st.cursor = row.last;
    st.next = row.last + 1;
    n++;
  }
  return n;
}
