// Content-addressed blobs: runs/<id>/blobs/<sha256>, raw text whose name is its checksum. Written
// durably once; read back only if the content still hashes to the name.
import path from 'node:path';
import { sha256 } from '../../common/hash';
import { writeDurably } from './durableFile';
import { AgentCheckpointCorruptionError, CheckpointNotFoundError } from '../api/errors';
import { errCode, isMissing, type FsLayer } from './fsLayer';
import { quarantine } from './quarantine';
import { corruptionReport, type CorruptionReport } from '../api/types';

export interface BlobCtx {
  fsl: FsLayer;
  root: string;
  now: () => number;
  retryDelaysMs?: readonly number[];
  report(r: CorruptionReport): void;
}

export async function putBlob(c: BlobCtx, runId: string, hash: string, content: string | Uint8Array): Promise<void> {
  const data =
    typeof content === 'string' ? content : Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const dir = path.join(c.root, 'runs', runId, 'blobs');
  await c.fsl.mkdir(dir, { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      return await writeDurably(c.fsl, path.join(dir, hash), data, {
        mode: 'create',
        retryDelaysMs: c.retryDelaysMs,
      });
    } catch (err) {
      if (errCode(err) !== 'EEXIST') throw err;
    }
    // Content-addressed: an existing intact blob is this content. A bad one is quarantined and rewritten.
    try {
      return void (await getBlob(c, runId, hash, true));
    } catch (err) {
      if (!(err instanceof AgentCheckpointCorruptionError)) throw err;
    }
  }
}

export async function getBlob(c: BlobCtx, runId: string, hash: string, repair: boolean): Promise<string> {
  const rel = path.posix.join('runs', runId, 'blobs', hash);
  let buf: Buffer;
  try {
    buf = await c.fsl.readFile(path.join(c.root, rel));
  } catch (err) {
    if (!isMissing(err)) throw err;
    const e = new CheckpointNotFoundError(
      `${rel} is missing (run ${runId}): the blob was deleted or never written.`,
      runId,
      rel,
    );
    c.report(blobReport(runId, rel, e.message, []));
    throw e;
  }
  if (sha256(buf) === hash) return buf.toString('utf8');
  const reason = `${rel} is corrupt: its content does not match its sha256 name`;
  const q = repair ? await quarantine(c.fsl, c.root, rel, reason, runId, c.now()) : null;
  c.report(blobReport(runId, rel, reason, q ? [q] : []));
  throw new AgentCheckpointCorruptionError(reason, runId, rel);
}

function blobReport(
  runId: string,
  file: string,
  reason: string,
  quarantined: CorruptionReport['quarantined'],
): CorruptionReport {
  return corruptionReport({
    run_id: runId,
    file,
    reason,
    quarantined,
    data_lost: true,
    lost: `the blob ${path.posix.basename(file)} (a full tool output); checkpoints are unaffected`,
  });
}
