// `agent-waypoints apply <run>`: the run's file changes (it ran elsewhere — a worker's checkout, another
// machine) brought into this checkout, as *Bring back here* does in a window (actions/bringBack): the
// plan printed file by file, then written with --yes (or after a yes on a terminal). A file changed
// here since the run started, or a protected one, is never written unless named with --overwrite;
// what a write replaces is kept with the run, so `apply <run> --undo` puts this checkout back.
// `--patch FILE` hands the changes over as a patch for `git apply` instead, touching nothing here.
import { promises as fs } from 'node:fs';
import readline from 'node:readline/promises';
import { BringBack } from '../actions/bringBack/action';
import type { BringBackPlan } from '../actions/bringBack/plan';
import { fsRestoreWriter } from '../actions/restore/files';
import { applyChoices, defaultTicks, restoreWrites, type PlannedFile } from '../actions/restore/plan';
import type { RestoreRecord, RunSummary } from '../store/api/schema';
import type { CliContext } from './compose';
import { Exit, table } from './output';
import { UsageError, type Out } from './out';

export interface ApplyArgs {
  dryRun: boolean;
  yes: boolean;
  undo: boolean;
  /** Only the changes after this checkpoint (default: from the run's start). */
  from: number | undefined;
  /** Conflicting or protected files to write with the run's version anyway. */
  overwrite: readonly string[];
  /** Write the changes as a patch to this file instead (nothing here is touched). */
  patch: string | undefined;
}

/** Exit codes of apply: 0 written or nothing to do, 2 files left as they are (a decision, or nothing can be written). */
export const APPLY_EXIT = { done: Exit.finished, left: 2 } as const;

export async function applyRun(ctx: CliContext, out: Out, run: RunSummary, a: ApplyArgs): Promise<number> {
  const scope = { workspaceRoot: ctx.workspace, storageDir: ctx.storageDir };
  const bringBack = new BringBack({
    store: ctx.store,
    owner: ctx.owner,
    scope,
    writer: fsRestoreWriter(ctx.store, scope, { atomic: true }),
    rules: () => ctx.settings.fileRules,
  });
  if (a.patch !== undefined) return writePatch(bringBack, out, run, a.patch, a.from);
  const planned = a.undo ? await bringBack.planUndo(run.run_id) : await bringBack.plan(run.run_id, { fromSeq: a.from });
  if (!planned) {
    say(
      out,
      { run_id: run.run_id, undo: true, files: [], record: null },
      'Nothing to undo: no bring-back of this run into this checkout is left to undo.',
    );
    return APPLY_EXIT.done;
  }
  const ticks = defaultTicks(planned);
  for (const p of a.overwrite) {
    const f = planned.files.find((x) => x.path === p);
    if (!f?.overwritable)
      throw new UsageError(
        `--overwrite ${p}: ${f ? `it cannot be chosen (${f.reason})` : 'the plan has no such file'}`,
      );
    ticks.add(p);
  }
  const chosen = applyChoices(planned, ticks);
  const plan: BringBackPlan = { ...planned, files: chosen.plan.files };
  const writes = restoreWrites(plan, chosen.overwrite).size;
  const left = plan.files.some((f) => leftAsIs(f, chosen.overwrite)) ? APPLY_EXIT.left : APPLY_EXIT.done;
  const head = heading(run, plan, ctx.workspace);
  if (a.dryRun || writes === 0) {
    const nothing =
      writes === 0
        ? `\n${a.undo ? 'Nothing left to undo' : 'Nothing to do: this checkout already has what can be brought'}.`
        : '';
    say(out, planJson(plan, chosen.overwrite, null), `${head}\n${planText(plan, chosen.overwrite)}${nothing}`);
    return left;
  }
  if (!out.json) out.result(`${head}\n${planText(plan, chosen.overwrite)}`);
  if (!a.yes && !(await confirmed(writes))) {
    if (!process.stdin.isTTY)
      throw new UsageError('pass --yes to write these files (or --dry-run to only see the plan)');
    out.problem('Nothing was written.');
    return Exit.error;
  }
  const record = await bringBack.apply(plan, { overwrite: chosen.overwrite });
  if (out.json) out.result(planJson(plan, chosen.overwrite, record));
  else out.result(done(record!, run.run_id, a.undo));
  return left;
}

async function writePatch(b: BringBack, out: Out, run: RunSummary, file: string, fromSeq?: number): Promise<number> {
  const p = await b.patch(run.run_id, { fromSeq });
  await fs.writeFile(file, p.patch);
  const n = p.included.length;
  const text = [
    `Wrote the changes of ${n} file${n === 1 ? '' : 's'} of run ${run.run_id} to ${file}: \`git apply ${file}\` applies them.`,
    ...(p.left.length > 0 ? ['Left out:', table(p.left.map((l) => [`  ${l.path}`, l.why]))] : []),
  ].join('\n');
  say(out, { run_id: run.run_id, patch: file, included: p.included, left: p.left }, text);
  return p.left.length > 0 ? APPLY_EXIT.left : APPLY_EXIT.done;
}

/** A file the apply leaves as it is although the run changed it (a conflict not chosen, refused, unknown). */
function leftAsIs(f: PlannedFile, overwrite: ReadonlySet<string>): boolean {
  if (overwrite.has(f.path)) return false;
  return f.action === 'conflict' || f.action === 'unrestorable' || f.action === 'refused';
}

function say(out: Out, json: unknown, text: string): void {
  out.result(out.json ? json : text);
}

function heading(run: RunSummary, plan: BringBackPlan, workspace: string): string {
  const what = plan.undoes
    ? `Undo ${plan.undoes} (the files run ${run.run_id} brought here)`
    : `Run ${run.run_id} — ${run.title}\nIts file changes ${plan.fromSeq > 0 ? `after checkpoint #${plan.fromSeq}` : 'since it started'}, up to checkpoint #${plan.toSeq}`;
  return `${what}, into ${workspace}:`;
}

/** What happens to the file, in a word. */
function verb(f: PlannedFile, overwrite: ReadonlySet<string>): string {
  if (overwrite.has(f.path)) return 'overwrite';
  switch (f.action) {
    case 'revert':
    case 'partial':
      return f.target?.kind === 'absent' ? 'delete' : f.current.kind === 'absent' ? 'create' : 'write';
    case 'unchanged':
      return 'already';
    case 'conflict':
      return 'keep';
    case 'unrestorable':
      return 'unknown';
    default:
      return 'refused';
  }
}

function planText(plan: BringBackPlan, overwrite: ReadonlySet<string>): string {
  const rows = plan.files.map((f) => [`  ${verb(f, overwrite)}`, f.path, f.reason]);
  const lines = [rows.length > 0 ? table(rows) : '  (the run changed no files)'];
  if (plan.notes.length > 0) lines.push('Notes:', ...plan.notes.map((n) => `  ${n}`));
  const choose = plan.files.filter((f) => f.overwritable && !overwrite.has(f.path));
  if (choose.length > 0) lines.push(`To write the run's version of a kept file anyway: --overwrite ${choose[0]!.path}`);
  return lines.join('\n');
}

function planJson(plan: BringBackPlan, overwrite: ReadonlySet<string>, record: RestoreRecord | null) {
  const writes = restoreWrites(plan, overwrite);
  return {
    run_id: plan.runId,
    from_seq: plan.fromSeq,
    to_seq: plan.toSeq,
    undoes: plan.undoes,
    files: plan.files.map((f) => ({
      path: f.path,
      action: f.action,
      will_write: writes.has(f.path),
      overwritable: f.overwritable,
      reason: f.reason,
    })),
    notes: plan.notes,
    record: record && { id: record.id, files: record.files.map((f) => ({ path: f.path, action: f.action })) },
  };
}

function done(r: RestoreRecord, runId: string, undo: boolean): string {
  const n = r.files.filter((f) => f.action === 'reverted' || f.action === 'overwritten').length;
  const kept = r.files.filter((f) => f.action === 'kept' || f.action === 'unrestorable').length;
  const what = undo ? `Undone: ${n} file${n === 1 ? '' : 's'} put back` : `Brought back ${n} file${n === 1 ? '' : 's'}`;
  const undoHint = undo ? '' : `\nUndo with: agent-waypoints apply ${runId} --undo`;
  return `${what} (${r.id}).${kept > 0 ? ` ${kept} left as they are (listed above).` : ''}${undoHint}`;
}

/** On a terminal, asks; elsewhere false (the caller says to pass --yes). */
async function confirmed(writes: number): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`Write ${writes} file${writes === 1 ? '' : 's'}? [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
