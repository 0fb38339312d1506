// A run's commit log on disk: runs/<id>/log/<12-digit n>.json, or <first>-<last>.json after
// compaction. Also the one space optimisation of the format: a tool message whose content equals
// the output of its effect (recorded just before) is written as a reference to it, so a tool's
// output is stored once, not twice.
import type { CommitOp } from './storedSchema';

export const pad = (n: number): string => String(n).padStart(12, '0');
export const commitName = (first: number, last: number): string => (first === last ? `${pad(first)}.json` : `${pad(first)}-${pad(last)}.json`);

export interface LogFile {
  name: string;
  first: number;
  last: number;
}

/** Commit files in a log folder (temp files and anything else are ignored). */
export function parseLogNames(names: readonly string[]): LogFile[] {
  const out: LogFile[] = [];
  for (const name of names) {
    const m = /^(\d{12})(?:-(\d{12}))?\.json$/.exec(name);
    if (!m) continue;
    const first = Number(m[1]);
    const last = m[2] ? Number(m[2]) : first;
    if (first >= 1 && last >= first) out.push({ name, first, last });
  }
  return out.sort((a, b) => a.first - b.first || b.last - a.last);
}

/** Candidates for the chain position p: the longest range first, the single file last. */
export function candidatesAt(files: readonly LogFile[], p: number): LogFile[] {
  return files.filter((f) => f.first === p).sort((a, b) => b.last - a.last);
}

type Outputs = Map<string, string>;
const REF = '$effect_output';

/** Replaces tool-message contents equal to their effect's output by a reference. Never mutates `ops`. */
export function encodeOps(ops: readonly CommitOp[], known: Outputs): { ops: CommitOp[]; added: Outputs } {
  const added: Outputs = new Map();
  const out: CommitOp[] = [];
  for (const op of ops) {
    if (op.op === 'effect' && op.effect.result) added.set(op.effect.tool_call_id, op.effect.result.output);
    const tail = op.op === 'record' ? op.lists?.messages : undefined;
    if (op.op !== 'record' || !tail) {
      out.push(op);
      continue;
    }
    const items = tail.items.map((item) => {
      const m = item as { role?: unknown; tool_call_id?: unknown; content?: unknown };
      if (m.role !== 'tool' || typeof m.tool_call_id !== 'string' || typeof m.content !== 'string' || m.content.length < 64) return item;
      const output = added.get(m.tool_call_id) ?? known.get(m.tool_call_id);
      if (output !== m.content) return item;
      return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, k === 'content' ? { [REF]: m.tool_call_id } : v]));
    });
    out.push({ ...op, lists: { ...op.lists, messages: { base: tail.base, items } } });
  }
  return { ops: out, added };
}

/** Resolves references (in place: the ops were just parsed from disk). Throws if one dangles. */
export function decodeOps(ops: CommitOp[], known: Outputs): Outputs {
  const added: Outputs = new Map();
  for (const op of ops) {
    if (op.op === 'effect' && op.effect.result) added.set(op.effect.tool_call_id, op.effect.result.output);
    const items = op.op === 'record' ? op.lists?.messages?.items : undefined;
    if (!items) continue;
    for (let i = 0; i < items.length; i++) {
      const m = items[i] as { content?: unknown };
      const ref = typeof m.content === 'object' && m.content !== null ? (m.content as Record<string, unknown>)[REF] : undefined;
      if (typeof ref !== 'string') continue;
      const output = added.get(ref) ?? known.get(ref);
      if (output === undefined) throw new Error(`a tool message refers to the output of effect ${ref}, which is not in the log`);
      m.content = output;
    }
  }
  return added;
}

/** What a lost commit file held, as far as it can still be read (for the corruption report). */
export function peekLost(text: string): { seqs: number[]; effects: boolean } | null {
  const start = text.indexOf('"body":');
  if (start < 0) return null;
  const raw = text.slice(start + 7).trimEnd().replace(/}$/, '');
  try {
    const body = JSON.parse(raw) as { ops?: { op?: string; record?: { seq?: unknown } }[] };
    if (!Array.isArray(body.ops)) return null;
    const seqs = body.ops.filter((o) => o?.op === 'record' && typeof o.record?.seq === 'number').map((o) => o.record!.seq as number);
    return { seqs, effects: body.ops.some((o) => o?.op === 'effect') };
  } catch {
    return null;
  }
}
