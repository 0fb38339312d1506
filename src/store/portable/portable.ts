// Whole-run operations: fork (a new run from any snapshot), export (one self-checking JSON object)
// and import (validated; legacy AFK-style checkpoints are normalised first, legacy.ts).
import { canonicalJson } from '../api/canonical';
import { copyJson } from '../core/copy';
import { sha256 } from '../../common/hash';
import { CheckpointNotFoundError, InvalidInputError, SchemaVersionError } from '../api/errors';
import { checkStoredPaths, distrustImported } from './importTrust';
import { isLegacyInput, normalizeLegacy } from './legacy';
import { migrate } from '../core/migrations';
import type { RunHandle, Lease } from '../core/runHandle';
import { CommitMismatchError } from '../core/runModel';
import { LIST_FIELDS, STORE_SCHEMA_VERSION, type CheckpointRecord, type RunMeta, type RunSummary } from '../api/schema';
import { EXPORT_FORMAT, RunExport, type CommitOp, type ListTails, type RunExportBody } from '../core/storedSchema';
import type { ForkOptions, OwnerInfo, RunLease } from '../api/types';
import type { Effect } from '../api/schema';

export interface PortableHost {
  now: () => number;
  readHandle(runId: string): Promise<RunHandle>;
  getBlob(runId: string, hash: string): Promise<string>;
  putBlobAs(runId: string, hash: string, content: string): Promise<void>;
  deleteRun(runId: string): Promise<void>;
  adoptNewRun(
    build: (runId: string) => { meta: RunMeta; ops: CommitOp[] },
    preferredId: string | undefined,
    owner: OwnerInfo,
    opts: { keepLease: boolean; renameOnCollision: boolean },
  ): Promise<{ run: RunSummary; lease?: Lease }>;
}

/**
 * A new run starting at the snapshot at/before `seq`: its first record is a copy of that checkpoint
 * (parent = {source, seq}) carrying the snapshot's lists, plus the effect records its pending LLM
 * response refers to (so finished tool calls replay instead of running again). Approvals are not
 * copied: the fork asks again.
 */
export async function forkRun(
  host: PortableHost,
  runId: string,
  seq: number,
  owner: OwnerInfo,
  opts?: ForkOptions,
): Promise<{ run: RunSummary; lease: RunLease }> {
  if (!Number.isInteger(seq) || seq < 1)
    throw new InvalidInputError(`fork seq must be a positive integer, got ${String(seq)}`);
  const src = (await host.readHandle(runId)).model;
  const found = src.verifiedSnapshotAt(seq);
  if (!found)
    throw new CheckpointNotFoundError(
      `Run ${runId} has no snapshot checkpoint at or before seq ${seq} to fork from.`,
      runId,
    );
  const { record, snapshot } = copyJson(found);
  const pendingIds = new Set((snapshot.pending_llm_response?.message.tool_calls ?? []).map((c) => c.id));
  const omitted = new Set(opts?.omitEffects ?? []);
  const effects = [...src.effects.values()]
    .filter((e) => pendingIds.has(e.tool_call_id) && !omitted.has(e.tool_call_id))
    .map((e) => copyJson(e));
  const blobs = await effectBlobs(host, runId, effects);
  const now = host.now();
  const build = (newId: string) => {
    const meta: RunMeta = {
      ...copyJson(src.meta),
      run_id: newId,
      thread_id: newId,
      title: opts?.title ?? `${src.meta.title} (fork of seq ${record.seq})`,
      created_ms: now,
      forked_from: { run_id: runId, seq: record.seq },
      imported: null, // the fork is made here; what its source's import reset is the source's story
    };
    const first: CheckpointRecord = {
      ...record,
      run_id: newId,
      thread_id: newId,
      seq: 1,
      parent: { run_id: runId, seq: record.seq },
      timestamp_ms: now,
    };
    const lists: ListTails = {};
    for (const f of LIST_FIELDS) if (snapshot[f].length > 0) lists[f] = { base: 0, items: snapshot[f] };
    const ops: CommitOp[] = [
      ...effects.map((e) => ({ op: 'effect' as const, effect: { ...e, run_id: newId } })),
      { op: 'record', record: first, lists },
    ];
    return { meta, ops };
  };
  const r = await host.adoptNewRun(build, undefined, owner, { keepLease: true, renameOnCollision: true });
  // The carried effects' blobs (full outputs, file versions) go with them: blobs are per run.
  for (const [hash, content] of Object.entries(blobs)) await host.putBlobAs(r.run.run_id, hash, content);
  return { run: r.run, lease: r.lease! };
}

/** Every blob the effects refer to: full outputs and the file journal's versions. */
async function effectBlobs(
  host: PortableHost,
  runId: string,
  effects: Iterable<Effect>,
): Promise<Record<string, string>> {
  const blobs: Record<string, string> = {};
  for (const e of effects) {
    const hashes = [
      e.result?.blob,
      e.result?.raw_blob,
      ...(e.files ?? []).flatMap((f) => [f.before, f.after].map((v) => (v.kind === 'file' ? v.blob : null))),
    ];
    for (const hash of hashes) if (hash && !(hash in blobs)) blobs[hash] = await host.getBlob(runId, hash);
  }
  return blobs;
}

export async function exportRun(host: PortableHost, runId: string): Promise<unknown> {
  const m = (await host.readHandle(runId)).model;
  m.verifyAll();
  const lists: RunExportBody['lists'] = [];
  for (const [seq, tails] of m.tails)
    for (const field of LIST_FIELDS) if (tails[field]) lists.push({ seq, field, ...tails[field] });
  const blobs = await effectBlobs(host, runId, m.effects.values());
  const body: RunExportBody = copyJson({
    meta: m.meta,
    state: m.state,
    state_detail: m.detail,
    state_ms: m.stateMs,
    records: m.records as CheckpointRecord[],
    lists,
    approvals: [...m.approvals.values()],
    effects: [...m.effects.values()],
    inbox: [...m.inbox.values()],
    ...(m.restores.length > 0 ? { restores: m.restores } : {}),
    ...(m.damage.length > 0 ? { damage: m.damage } : {}),
    blobs,
  });
  return { format: EXPORT_FORMAT, schema_version: STORE_SCHEMA_VERSION, sha256: sha256(canonicalJson(body)), body };
}

/**
 * Validates everything before writing anything; a colliding run id gets a new id. The run keeps its
 * history but no decision nobody made here (importTrust.ts): the export is a file anyone can edit.
 */
export async function importRun(host: PortableHost, data: unknown, owner: OwnerInfo): Promise<RunSummary> {
  const body = isLegacyInput(data) ? normalizeLegacy(data) : checkExport(data);
  for (const [hash, content] of Object.entries(body.blobs)) {
    if (sha256(Buffer.from(content, 'utf8')) !== hash)
      throw new InvalidInputError(`Import refused: blob ${hash} does not match its checksum.`);
  }
  for (const e of body.effects) {
    const refs = [
      e.result?.blob,
      e.result?.raw_blob,
      ...(e.files ?? []).flatMap((f) => [f.before, f.after].map((v) => (v.kind === 'file' ? v.blob : null))),
    ];
    for (const ref of refs)
      if (ref && !(ref in body.blobs))
        throw new InvalidInputError(
          `Import refused: effect ${e.tool_call_id} refers to blob ${ref}, which is not in the export.`,
        );
  }
  checkStoredPaths(body);
  const oldId = body.meta.run_id;
  const importedMs = host.now();
  const build = (newId: string) =>
    distrustImported({ ...body.meta, run_id: newId }, importOps(body, oldId, newId), { runId: oldId, now: importedMs });
  let r: { run: RunSummary; lease?: Lease };
  try {
    r = await host.adoptNewRun(build, oldId, owner, { keepLease: true, renameOnCollision: true });
  } catch (err) {
    if (err instanceof CommitMismatchError)
      throw new InvalidInputError(`Import refused: the run's data is inconsistent (${err.message}).`);
    throw err;
  }
  const newId = r.run.run_id;
  try {
    for (const [hash, content] of Object.entries(body.blobs)) await host.putBlobAs(newId, hash, content);
    await r.lease!.release();
  } catch (err) {
    await host.deleteRun(newId).catch(() => undefined);
    throw err;
  }
  return r.run;
}

function checkExport(data: unknown): RunExportBody {
  const d = data as { format?: unknown; schema_version?: unknown; sha256?: unknown; body?: unknown } | null;
  if (typeof d !== 'object' || d === null || d.format !== EXPORT_FORMAT) {
    throw new InvalidInputError(
      `Import refused: not an Agent Waypoints run export (expected format "${EXPORT_FORMAT}") nor legacy checkpoint records.`,
    );
  }
  const version = d.schema_version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1)
    throw new InvalidInputError('Import refused: the export has no valid schema_version.');
  if (version > STORE_SCHEMA_VERSION) throw new SchemaVersionError('the imported run', version, STORE_SCHEMA_VERSION);
  if (typeof d.sha256 !== 'string' || sha256(canonicalJson(d.body)) !== d.sha256) {
    throw new InvalidInputError(
      'Import refused: checksum mismatch — the export was modified or truncated after it was written.',
    );
  }
  const r = RunExport.safeParse({ ...d, body: migrate('export', version, d.body) });
  if (!r.success) {
    const i = r.error.issues[0];
    throw new InvalidInputError(`Import refused: ${i?.path.join('.') || '(root)'}: ${i?.message ?? 'invalid'}.`);
  }
  return r.data.body;
}

function importOps(body: RunExportBody, oldId: string, newId: string): CommitOp[] {
  const tails = new Map<number, ListTails>();
  for (const l of body.lists) {
    if (!body.records[l.seq - 1])
      throw new InvalidInputError(
        `Import refused: a ${l.field} list refers to checkpoint ${l.seq}, which is not in the export.`,
      );
    const t = tails.get(l.seq) ?? {};
    t[l.field] = { base: l.base, items: l.items };
    tails.set(l.seq, t);
  }
  const ops: CommitOp[] = [];
  for (const effect of body.effects) ops.push({ op: 'effect', effect: { ...effect, run_id: newId } });
  for (const approval of body.approvals) ops.push({ op: 'approval', approval: { ...approval, run_id: newId } });
  for (const rec of body.records) {
    const parent = rec.parent && rec.parent.run_id === oldId ? { ...rec.parent, run_id: newId } : rec.parent;
    const record = { ...rec, run_id: newId, parent };
    const lists = tails.get(rec.seq);
    ops.push(lists ? { op: 'record', record, lists } : { op: 'record', record });
  }
  for (const message of body.inbox) ops.push({ op: 'inbox', message: { ...message, run_id: newId } });
  for (const restore of body.restores ?? []) ops.push({ op: 'restore', restore: { ...restore } });
  for (const damage of body.damage ?? []) ops.push({ op: 'damage', damage }); // an imported run still knows what it lost
  ops.push({ op: 'state', state: body.state, detail: body.state_detail, ms: body.state_ms });
  return ops;
}
