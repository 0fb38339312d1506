// The "condensed here" markers of a run: one per post_condense checkpoint that made a condense,
// with its summary, what it condensed, and whether it was undone or can be undone now.
import { Condense, ContextSize, isTerminalState } from '../../store/api/schema';
import type { CondenseItem } from './items';
import type { RunData } from './runData';

export function condenseItems(d: RunData): { step: number; item: CondenseItem; placed: boolean }[] {
  const runId = d.run.run_id;
  const current = d.snapshot?.model_context?.condense?.id ?? null;
  const stopped = !d.live.active && !isTerminalState(d.run.state);
  const undone = new Set(
    d.records.filter((r) => r.phase === 'post_condense' && r.payload?.undo_of).map((r) => String(r.payload!.undo_of)),
  );
  const before = new Map<number, number>();
  for (const r of d.records) {
    const size = ContextSize.safeParse(r.payload?.context);
    if (r.phase === 'pre_condense' && size.success) before.set(r.seq, size.data.tokens);
  }
  const out: { step: number; item: CondenseItem; placed: boolean }[] = [];
  for (const r of d.records) {
    if (r.phase !== 'post_condense' || r.payload?.undo_of) continue;
    const c = Condense.safeParse(r.snapshot?.model_context?.condense);
    const size = ContextSize.safeParse(r.payload?.context);
    if (!c.success || !size.success) continue;
    out.push({
      step: r.step,
      placed: false,
      item: {
        kind: 'condense',
        key: `${runId}:c:${r.seq}`,
        runId,
        step: r.step,
        condenseId: c.data.id,
        seq: r.seq,
        summary: c.data.summary,
        from: c.data.head + 1,
        through: c.data.through,
        tokensBefore: before.get(c.data.pre_seq) ?? null,
        tokensAfter: size.data.tokens,
        window: size.data.window,
        reason: String(d.records.find((x) => x.seq === c.data.pre_seq)?.payload?.reason ?? 'threshold'),
        undone: undone.has(c.data.id),
        undoable: stopped && current === c.data.id,
      },
    });
  }
  return out;
}
