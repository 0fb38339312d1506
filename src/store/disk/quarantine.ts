// Bad files are moved, never deleted: quarantine/<when>-<run>-<file>, with a .why.json beside it.
import crypto from 'node:crypto';
import path from 'node:path';
import { writeDurably } from './durableFile';
import { isMissing, type FsLayer } from './fsLayer';

export interface Quarantined {
  file: string;
  to: string;
  reason: string;
}

/** Copies `root/rel` into quarantine and keeps the original (a segment whose good part stays in use). */
export async function quarantineCopy(
  fsl: FsLayer,
  root: string,
  rel: string,
  reason: string,
  runId: string | null,
  now: number,
): Promise<Quarantined | null> {
  let bytes: Buffer;
  try {
    bytes = await fsl.readFile(path.join(root, rel));
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
  const to = quarantineName(rel, runId, now);
  await fsl.mkdir(path.join(root, 'quarantine'), { recursive: true });
  await writeDurably(fsl, path.join(root, to), bytes, { mode: 'create' });
  await note(fsl, root, to, { file: rel, run_id: runId, reason, copied_ms: now, pid: process.pid });
  return { file: rel, to, reason };
}

function quarantineName(rel: string, runId: string | null, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
  return path.posix.join(
    'quarantine',
    `${stamp}-${runId ?? 'store'}-${rel.replace(/[/\\]/g, '_')}-${crypto.randomBytes(3).toString('hex')}`,
  );
}

/** The move (or copy) is what matters; a failed note must not hide the corruption report. */
async function note(fsl: FsLayer, root: string, to: string, why: Record<string, unknown>): Promise<void> {
  await writeDurably(fsl, path.join(root, `${to}.why.json`), JSON.stringify(why, null, 2), { mode: 'replace' }).catch(
    () => undefined,
  );
}

/** Moves `root/rel` into quarantine. null when the file is already gone (another window moved it). */
export async function quarantine(
  fsl: FsLayer,
  root: string,
  rel: string,
  reason: string,
  runId: string | null,
  now: number,
): Promise<Quarantined | null> {
  const to = quarantineName(rel, runId, now);
  await fsl.mkdir(path.join(root, 'quarantine'), { recursive: true });
  try {
    await fsl.rename(path.join(root, rel), path.join(root, to));
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
  await note(fsl, root, to, { file: rel, run_id: runId, reason, moved_ms: now, pid: process.pid });
  return { file: rel, to, reason };
}
