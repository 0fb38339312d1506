// Recovery, step two: the file operations a judgement (damage.ts) asks for, in its order, by the run's
// owner only. Quarantine comes first wherever the judgement put it: nothing is cut or rewritten before
// its bytes are kept.
import path from 'node:path';
import type { LoadCtx } from './commit';
import type { RepairOp } from './damage';
import type { Quarantined } from './quarantine';

/**
 * Runs `plan` for run `runId`. `rewrite(file)` writes a mended file again from what was read. Returns
 * what was quarantined, by the report each copy or move belongs to.
 */
export async function repair(
  ctx: LoadCtx,
  runId: string,
  plan: readonly RepairOp[],
  rewrite: (file: string) => Promise<void>,
): Promise<Map<number, Quarantined[]>> {
  const kept = new Map<number, Quarantined[]>();
  const keep = (report: number | null, q: Quarantined | null) => {
    if (q && report !== null) kept.set(report, [...(kept.get(report) ?? []), q]);
  };
  for (const op of plan) {
    const abs = path.join(ctx.root, op.file);
    if (op.op === 'copy') keep(op.report, await ctx.quarantineCopy(op.file, op.reason, runId));
    else if (op.op === 'move') keep(op.report, await ctx.quarantine(op.file, op.reason, runId));
    else if (op.op === 'truncate') await ctx.fsl.truncate(abs, op.to);
    else if (op.op === 'rewrite') await rewrite(op.file);
    else await ctx.fsl.unlink(abs).catch(() => undefined); // (retire: another window may have done it)
  }
  return kept;
}
