// index_head.json: the head of the run index (core/indexCache.ts headOf: the newest runs and every
// unfinished one), so a store of thousands of runs opens and lists its first page without reading
// index.json whole. A cache of a cache: used only while index.json and the runs folder are exactly
// as it recorded them (else the store reads index.json as before), so it is written without fsync —
// a head torn by a crash fails its checksum, one left behind by a newer index.json its stat.
import path from 'node:path';
import type { IndexHead } from '../core/engine';
import { headOf } from '../core/indexCache';
import { IndexHeadBody, type IndexEntry } from '../core/storedSchema';
import { DurableJsonFile, encodeEnvelope, replaceUnsynced } from './durableFile';
import type { FsLayer } from './fsLayer';

export const INDEX_HEAD_FILE = 'index_head.json';

/** The head, when index.json and the runs folder are as it recorded them; undefined otherwise. */
export async function readIndexHead(fsl: FsLayer, root: string): Promise<IndexHead | undefined> {
  const file = path.join(root, INDEX_HEAD_FILE);
  let body: IndexHeadBody;
  try {
    body = new DurableJsonFile(fsl, file, 'index_head', IndexHeadBody).parse(await fsl.readFile(file));
  } catch {
    return undefined; // missing, torn or of another version: index.json is the index
  }
  if (body.runs_mtime_ms === null) return undefined;
  const [index, runs] = await Promise.all([
    fsl.stat(path.join(root, 'index.json')).catch(() => undefined),
    fsl.stat(path.join(root, 'runs')).catch(() => undefined),
  ]);
  const current =
    index?.size === body.index.size &&
    index.mtimeMs === body.index.mtime_ms &&
    index.ino === body.index.ino &&
    runs?.mtimeMs === body.runs_mtime_ms;
  return current ? { entries: body.runs, cutoff: body.cutoff, unindexed: [] } : undefined;
}

/**
 * The runs folder's mtime if every run in it has an entry in `entries` (taken before looking, so a
 * run made meanwhile changes it), else null: the next opening must read the folder.
 */
export async function coveredRunsMtime(
  fsl: FsLayer,
  root: string,
  entries: readonly IndexEntry[],
  isRunId: (name: string) => boolean,
): Promise<number | null> {
  const dir = path.join(root, 'runs');
  const st = await fsl.stat(dir).catch(() => undefined);
  if (!st) return null;
  const known = new Set(entries.map((e) => e.run_id));
  const names = await fsl.readdir(dir).catch(() => undefined);
  if (!names || names.some((n) => n.startsWith('.trash-') || (isRunId(n) && !known.has(n)))) return null;
  return st.mtimeMs;
}

/** Writes the head of `entries`, which index.json holds as just written. */
export async function writeIndexHead(
  fsl: FsLayer,
  root: string,
  entries: readonly IndexEntry[],
  runsMtimeMs: number | null,
  newest?: number,
): Promise<void> {
  const index = await fsl.stat(path.join(root, 'index.json'));
  const { runs, cutoff } = headOf(entries, newest);
  const body: IndexHeadBody = {
    index: { size: index.size, mtime_ms: index.mtimeMs, ino: index.ino },
    runs_mtime_ms: runsMtimeMs,
    cutoff,
    runs,
  };
  await replaceUnsynced(fsl, path.join(root, INDEX_HEAD_FILE), Buffer.from(encodeEnvelope('index_head', body), 'utf8'));
}
