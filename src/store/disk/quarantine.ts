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

/** Moves `root/rel` into quarantine. null when the file is already gone (another window moved it). */
export async function quarantine(fsl: FsLayer, root: string, rel: string, reason: string, runId: string | null, now: number): Promise<Quarantined | null> {
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
  const name = `${stamp}-${runId ?? 'store'}-${rel.replace(/[/\\]/g, '_')}-${crypto.randomBytes(3).toString('hex')}`;
  const to = path.posix.join('quarantine', name);
  await fsl.mkdir(path.join(root, 'quarantine'), { recursive: true });
  try {
    await fsl.rename(path.join(root, rel), path.join(root, to));
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
  const why = { file: rel, run_id: runId, reason, moved_ms: now, pid: process.pid };
  // The move is what matters; a failed note must not hide the corruption report.
  await writeDurably(fsl, path.join(root, `${to}.why.json`), JSON.stringify(why, null, 2), { mode: 'replace' }).catch(() => undefined);
  return { file: rel, to, reason };
}
