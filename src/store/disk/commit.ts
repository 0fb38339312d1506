// What every log of commits shares (a disk segment, a snapshot, a PostgreSQL row): the commit body as
// written (RawCommit), decoding it against the log before it, what the surviving chain holds, and the
// report when the chain was cut short — with the run's tail witness as the judge of what had been
// acknowledged.
import path from 'node:path';
import { z } from 'zod';
import { AgentCheckpointCorruptionError } from '../api/errors';
import type { Effect, LostCall, RunMeta, RunState } from '../api/schema';
import { corruptionReport, type CorruptionReport } from '../api/types';
import type { LoadResult } from '../core/engine';
import { StoredCommitBody, type CommitBody, type CommitOp, type TailWitness } from '../core/storedSchema';
import { fastValid } from '../core/fastValid';
import { effectAfter } from '../core/runModel';
import { decodeOps, type Codec, type CodecDelta, type PeekedCommit } from './codec';
import type { FsLayer } from './fsLayer';
import type { Quarantined } from './quarantine';

export interface LoadCtx {
  fsl: FsLayer;
  root: string;
  retryDelaysMs?: readonly number[];
  /** Moves a bad file to quarantine. */
  quarantine(rel: string, reason: string, runId: string): Promise<Quarantined | null>;
  /** Copies a file to quarantine, keeping the original (a segment whose good part stays in use). */
  quarantineCopy(rel: string, reason: string, runId: string): Promise<Quarantined | null>;
}

export interface LoadedFiles {
  result: LoadResult;
  /** Next commit number to write. */
  next: number;
  /** The codec state after the last commit (the next commit is encoded against it). */
  codec: Codec;
  meta: RunMeta;
  /** Commits covered by the compacted file (snapshot) the chain starts with (0: none). */
  covered: number;
}

export const rel = (runId: string, ...parts: string[]): string => path.posix.join('runs', runId, ...parts);

/** A commit as written (a segment frame, a snapshot, a row): not yet decoded (codec.decodeOps). */
export interface RawCommit {
  run_id: string;
  first: number;
  last: number;
  meta?: RunMeta;
  /** A snapshot's: written by a store that keeps a tail witness. */
  witnessed?: true;
  ops: unknown[];
}

export function isRawCommit(v: unknown): v is RawCommit {
  const b = v as Partial<RawCommit> | null;
  return (
    typeof b === 'object' &&
    b !== null &&
    typeof b.run_id === 'string' &&
    Number.isInteger(b.first) &&
    Number.isInteger(b.last) &&
    Array.isArray(b.ops)
  );
}

/**
 * Only the shape needed to decode; the decoded body is then validated in full (StoredCommitBody).
 * z.custom checks without copying: a second full parse of thousands of small commits was a
 * measurable part of resuming.
 */
export const RawCommit = z.custom<RawCommit>(isRawCommit, 'not a commit body');

/** Decodes a raw commit (in place) against the log before it and validates it. Returns the body and the codec after it. */
export function decodeCommit(
  raw: RawCommit,
  codec: Codec,
  meta: RunMeta,
  file: string,
  runId: string,
): { body: CommitBody; delta: CodecDelta } {
  const next = decodeOps(raw.ops, codec, meta);
  // What zod's parse returns (it drops `witnessed`, which the body schema does not have), without
  // running zod when the fast path vouches for it.
  const { witnessed: _witnessed, ...body } = raw;
  if (fastValid(StoredCommitBody)(body)) return { body: body as CommitBody, delta: next };
  const r = StoredCommitBody.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new AgentCheckpointCorruptionError(
      `${file} is corrupt: does not match its schema (${i?.path.join('.') || '(root)'}: ${i?.message ?? 'invalid'})`,
      runId,
      file,
    );
  }
  return { body: r.data, delta: next };
}

/** What the surviving chain holds: the witness counts the same way, so the two compare. */
export class Survived {
  seq = 0;
  step = 0;
  private readonly effects = new Map<string, Effect>();

  add(ops: readonly CommitOp[]): void {
    for (const op of ops) {
      if (op.op === 'record') {
        this.seq = op.record.seq;
        this.step = op.record.step;
      } else if (op.op === 'effect') {
        // As the run counts them (the witness's count): a withdrawn intent is no effect of the run.
        const held = effectAfter(this.effects.get(op.effect.tool_call_id), op.effect);
        if (held) this.effects.set(op.effect.tool_call_id, held);
        else this.effects.delete(op.effect.tool_call_id);
      }
    }
  }

  get intents(): number {
    return this.effects.size;
  }

  get results(): number {
    let n = 0;
    for (const e of this.effects.values()) if (e.result) n++;
    return n;
  }
}

/** What the lost part still shows, read without trusting it (see codec.peekLost). */
export interface Peeked {
  seqs: number[];
  calls: LostCall[];
  terminal: RunState | null;
  maxStep: number;
  /** Lost commits that could be read / could not; whether any showed effect records. */
  readable: number;
  unreadable: number;
  effectsSeen: boolean;
}

export function emptyPeek(): Peeked {
  return { seqs: [], calls: [], terminal: null, maxStep: 0, readable: 0, unreadable: 0, effectsSeen: false };
}

/** Adds what one lost commit showed (codec.peekLost / peekBody; null: unreadable) to what is known of the lost part. */
export function peekInto(out: Peeked, seen: PeekedCommit | null): void {
  if (!seen) {
    out.unreadable++;
    return;
  }
  out.readable++;
  out.seqs.push(...seen.seqs);
  out.calls.push(...seen.calls);
  out.terminal ??= seen.terminal;
  out.maxStep = Math.max(out.maxStep, seen.maxStep);
  if (seen.effects) out.effectsSeen = true;
}

/** true: a lost commit shows effect records; false: all were read and none does; null: unknown. */
function peekedEffects(p: Peeked): boolean | null {
  if (p.effectsSeen) return true;
  return p.unreadable > 0 || p.readable === 0 ? null : false;
}

export interface LostTail {
  runId: string;
  /** The first bad or missing file, and why. */
  file: string;
  reason: string;
  quarantined: Quarantined[];
  survived: Survived;
  witness: TailWitness | null;
  /** The highest commit number the files on disk claim (a witness older than that cannot speak for them). */
  onDisk: number;
  peeked: Peeked;
}

/** The report of a chain that lost data: what, and whether effect records went with it. */
export function lostTailReport(t: LostTail): CorruptionReport {
  const effects = effectsLost(t);
  const from = t.survived.seq + 1;
  const to = Math.max(0, t.witness?.seq ?? 0, ...t.peeked.seqs);
  const what = `${to >= from ? `checkpoints ${from}–${to}` : `the checkpoints after seq ${t.survived.seq}`}${effects ? ' and effect records' : effects === null ? ' (and possibly effect records)' : ''}`;
  return corruptionReport({
    run_id: t.runId,
    file: t.file,
    reason: t.reason,
    quarantined: t.quarantined,
    fell_back_to_seq: t.survived.seq || null,
    lost_seqs: to >= from ? { from, to } : null,
    effects_lost: effects,
    data_lost: true,
    state_before: t.witness?.state ?? t.peeked.terminal,
    step_before: t.witness?.step ?? (t.peeked.maxStep > 0 ? t.peeked.maxStep : null),
    lost_calls: t.peeked.calls,
    lost: `${what}; the run fell back to seq ${t.survived.seq}`,
  });
}

/**
 * Whether effect records were lost. The witness counts them after every acknowledged commit, so when
 * it covers every commit on disk its count is the answer; the lost commits' own content can only add
 * evidence that some were (it may be another run's, or unreadable): false needs proof, null = unknown.
 */
function effectsLost(t: LostTail): boolean | null {
  const w = t.witness;
  if (w && (w.intents > t.survived.intents || w.results > t.survived.results)) return true;
  const seen = peekedEffects(t.peeked);
  if (seen === true) return true;
  if (w && w.commits >= t.onDisk) return false;
  return seen;
}

/** One report per load: the one that lost data leads; the others (a mended file, the witness) are folded in. */
export function mergeReports(rs: CorruptionReport[]): CorruptionReport | null {
  if (rs.length === 0) return null;
  const main = rs.find((r) => r.data_lost) ?? rs[rs.length - 1]!;
  if (rs.length === 1) return main;
  return {
    ...main,
    quarantined: rs.flatMap((r) => r.quarantined),
    lost: rs.map((r) => `${r.file}: ${r.lost}`).join('; '),
  };
}
