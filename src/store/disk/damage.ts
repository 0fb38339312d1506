// Recovery, step one: what is damaged in a run's files, and what would repair it — a pure judgement
// over what reading them found (load.ts reads and applies; repair.ts does the file operations).
//
//  - a torn tail (a frame cut short at the very end, nothing valid after it) that no witness counted
//    is an append a crash cut short: never acknowledged, cut off and noted, not reported;
//  - anything else the chain stopped on — a bad frame with valid ones after it, a tail shorter than a
//    witness says was acknowledged, a segment without a header of its run (zeroed, overwritten,
//    another run's, deleted) — lost acknowledged data: reported, the bytes quarantined, the run falls
//    back to its last good commit;
//  - damage that lost nothing (a bit corrected, a segment rebuilt from its copies, a snapshot read from
//    its spare copy, one witness slot bad) is reported and the file written again from what was read.
//
// Damaged bytes are quarantined (a copy, or the file moved) before anything cuts or rewrites them. The
// only bytes removed unquarantined are not data: a torn tail a valid witness says was never
// acknowledged, and a segment whose every commit a checked snapshot holds.
import type { TailWitness } from '../core/storedSchema';
import type { WitnessRead } from './witness';

export interface SegmentFinding {
  /** Its path in the store (runs/<id>/segment-….log). */
  file: string;
  /** What is wrong with its header (null: a header of this run, as its name says). */
  headerBad: string | null;
  /** Read whole after damage that lost nothing (and how): copied to quarantine, then written again. */
  mended: { reason: string; kept: string } | null;
  /**
   * Every commit it holds is in the snapshot, and it reads whole, or a later segment supersedes it: a
   * finished compaction's leftover.
   */
  covered: boolean;
  /** Part of the chain (its frames were applied, or skipped as covered). */
  used: boolean;
}

export interface SnapshotFinding {
  file: string;
  present: boolean;
  /** Unreadable, and why: what it held is lost unless the segments still hold it. */
  bad: string | null;
  /** Read whole from the copy that checks out; why the other did not. */
  mended: string | null;
}

export interface ChainStop {
  file: string;
  reason: string;
  /** The segment it stopped in (an index into `segments`), or null (the snapshot, a gap). */
  segment: number | null;
  /** Where the good part of that segment ends. */
  frameAt: number;
  /** An append cut short at the end of the last segment (or a last segment with no complete header). */
  torn: boolean;
  /** The segment has no complete header at all (one being created, or destroyed). */
  headless: boolean;
  /** The frame that failed is a copy frame (no commit in it). */
  copy: boolean;
}

export interface Findings {
  runId: string;
  segments: SegmentFinding[];
  snapshot: SnapshotFinding;
  /** The next commit the chain expects (the commits applied, plus one), and where it stopped on something bad. */
  next: number;
  stop: ChainStop | null;
  /** The witness file, and the witness area of the newest segment with a good header (null: none). */
  witnessFile: { file: string; read: WitnessRead };
  witnessArea: { file: string; read: WitnessRead } | null;
  /** The run index's count of durable commits: a second, lagging witness. */
  indexCommits: number;
  /** The run's owner is reading it: the plan is carried out (the notices say so). */
  repair: boolean;
}

/** A report to make: `kept` says how nothing was lost ("nothing: …"); null: acknowledged data was (the lost tail). */
export interface ReportPlan {
  file: string;
  reason: string;
  kept: string | null;
}

export type RepairOp =
  /** A copy of the file into quarantine, for report `report` (null: noted, not reported). */
  | { op: 'copy'; file: string; reason: string; report: number | null }
  /** The file itself moved into quarantine. */
  | { op: 'move'; file: string; reason: string; report: number | null }
  | { op: 'truncate'; file: string; to: number }
  /** The file written again whole from what was read (a mended segment). */
  | { op: 'rewrite'; file: string }
  /** A segment every commit of which a checked snapshot holds: removed. */
  | { op: 'retire'; file: string };

export interface Verdict {
  reports: ReportPlan[];
  /** The report of lost acknowledged data (an index into `reports`), or null. */
  lost: number | null;
  notices: { file: string; message: string }[];
  /** What the owner does, in order (a reader does none of it). */
  plan: RepairOp[];
  /** The witness that judged (the newer of the two places; null: neither readable). */
  witness: TailWitness | null;
  /** The witness is written again whole: missing, damaged, or behind the log. */
  rewriteWitness: boolean;
}

export function judge(f: Findings): Verdict {
  const v: Verdict = { reports: [], lost: null, notices: [], plan: [], witness: null, rewriteWitness: false };
  const report = (file: string, reason: string, kept: string | null): number =>
    v.reports.push({ file, reason, kept }) - 1;
  for (const s of f.segments)
    if (s.mended) {
      const r = report(s.file, s.mended.reason, s.mended.kept);
      v.plan.push({ op: 'copy', file: s.file, reason: s.mended.reason, report: r }, { op: 'rewrite', file: s.file });
    }
  if (f.snapshot.mended) {
    const reason = `${f.snapshot.file}: ${f.snapshot.mended}`;
    const r = report(
      f.snapshot.file,
      reason,
      'every record was read from the copy that is whole; the file is rewritten',
    );
    v.plan.push({ op: 'copy', file: f.snapshot.file, reason, report: r });
  }
  judgeWitness(f, v, report);
  judgeChain(f, v, report);
  for (const s of f.segments)
    if (s.covered && !v.plan.some((o) => o.file === s.file)) v.plan.push({ op: 'retire', file: s.file });
  return v;
}

/** The witness in its two places: a bad or missing one is rebuilt (from the other, or the log). */
function judgeWitness(f: Findings, v: Verdict, report: (file: string, reason: string, kept: string) => number): void {
  const places = [
    { ...f.witnessFile, what: f.witnessFile.file, inFile: true },
    ...(f.witnessArea ? [{ ...f.witnessArea, what: `the witness area of ${f.witnessArea.file}`, inFile: false }] : []),
  ];
  for (const p of places) {
    const w = p.read;
    if (w.kind === 'ok') v.witness = newer(v.witness, w.witness);
    const why = w.kind === 'bad' ? w.reason : w.kind === 'ok' ? w.damaged : null;
    if (why !== null) {
      const reason = `${p.what} is corrupt: ${why}`;
      const kept = w.kind === 'ok' ? 'its intact slot was used, and it is rewritten' : 'it is rebuilt from the log';
      const r = report(p.file, reason, kept);
      // The witness file is rewritten whole (a bad one moved aside first); a segment only keeps a copy.
      v.plan.push({ op: p.inFile && w.kind === 'bad' ? 'move' : 'copy', file: p.file, reason, report: r });
      v.rewriteWitness = true;
    } else if (w.kind === 'missing' && p.inFile) {
      v.rewriteWitness = true;
      const how = w.empty ? 'is empty (the run was stopped before its first write)' : 'is missing';
      if (f.next > 1)
        v.notices.push({ file: p.file, message: `${p.file} ${how}: written again from what the log holds` });
    }
  }
}

/** Where the chain ended: a crash's torn tail, lost acknowledged data, or a bad snapshot the segments cover. */
function judgeChain(
  f: Findings,
  v: Verdict,
  report: (file: string, reason: string, kept: string | null) => number,
): void {
  const { stop, next } = f;
  const expect = Math.max(f.indexCommits, v.witness?.commits ?? 0);
  const who = (v.witness?.commits ?? 0) >= expect ? "the run's witness" : 'the run index';
  const stopSeg = stop?.segment != null ? f.segments[stop.segment]! : null;
  const later = f.segments.filter((s) => !s.used && s !== stopSeg);
  if (stop?.torn && expect < next) {
    // A crash mid-append (or mid-creation of a segment): never acknowledged. Cut off (by the owner) and noted.
    const cut = f.repair ? (stop.headless ? ', moved to quarantine' : ', cut off') : '';
    const message = stop.headless
      ? `${stop.reason}: a segment being created when the process stopped (no commit in it)${cut}`
      : stop.copy
        ? `${stop.reason}: the copy frame at its end (no commit in it) is cut short or damaged${cut}; the next release writes the copy again`
        : `${stop.reason}: an append cut short by a crash (never acknowledged)${cut}`;
    v.notices.push({ file: stop.file, message });
    if (stop.headless) v.plan.push({ op: 'move', file: stop.file, reason: message, report: null });
    else {
      // Without a witness to vouch that it was never acknowledged, the cut bytes are kept first.
      if (!v.witness) v.plan.push({ op: 'copy', file: stop.file, reason: message, report: null });
      v.plan.push({ op: 'truncate', file: stop.file, to: stop.frameAt });
    }
    return;
  }
  if (stop || expect >= next || later.length > 0) {
    const tail = f.segments.filter((s) => s.used).at(-1);
    const file = stop?.file ?? tail?.file ?? `runs/${f.runId}/segment-${String(next).padStart(12, '0')}.log`;
    const says = `${who} says ${expect} commits were written`;
    const reason = stop
      ? stop.headless
        ? `${stop.reason}, but ${says}`
        : stop.reason
      : tail
        ? `${file} ends at commit ${next - 1}, but ${says}`
        : f.snapshot.present
          ? `${file} is missing: ${f.snapshot.file} ends at commit ${next - 1}, but ${says}`
          : `${file} is missing (and no snapshot.json holds its commits), but ${says}`;
    const r = (v.lost = report(file, reason, null));
    if (stopSeg && stopSeg.headerBad !== null) v.plan.push({ op: 'move', file: stopSeg.file, reason, report: r });
    else if (stopSeg && stop)
      v.plan.push(
        { op: 'copy', file: stopSeg.file, reason, report: r },
        { op: 'truncate', file: stopSeg.file, to: stop.frameAt },
      );
    if (f.snapshot.bad)
      v.plan.push({
        op: 'move',
        file: f.snapshot.file,
        reason: stop?.file === f.snapshot.file ? reason : `${f.snapshot.file} is corrupt`,
        report: r,
      });
    for (const s of later)
      v.plan.push({
        op: 'move',
        file: s.file,
        reason: `follows ${stop?.file ?? 'the end of the chain'}, where the chain broke`,
        report: r,
      });
    v.rewriteWitness = true; // it counted commits the log no longer holds
    return;
  }
  if (f.snapshot.bad) {
    // The segments still held every commit (a compaction that never retired them): nothing lost.
    const r = report(f.snapshot.file, f.snapshot.bad, 'the segments still held every commit');
    v.plan.push({ op: 'move', file: f.snapshot.file, reason: f.snapshot.bad, report: r });
  }
}

/** The witness with more commits (neither claims more than was acknowledged). */
export function newer(a: TailWitness | null, b: TailWitness | null): TailWitness | null {
  if (!a) return b;
  if (!b) return a;
  return b.commits > a.commits ? b : a;
}
