// Property (docs/design.md, reliability goals: file restore): random runs of agent edits (write_file, and commands that
// write, delete, rename and write binary), user edits between steps, then restores to random
// checkpoints — one after another, so restores of restores too. After every restore:
//  - a file whose current content the user wrote is left exactly as it is (no user edit is lost),
//    unless that content is byte for byte what the agent last left there;
//  - a file only the agent changed since the checkpoint (with earlier content it could know) is
//    back to its content at that checkpoint;
//  - a file the agent never touched is untouched.
// The real loop, real tools, a real shell and git, the memory store; each restore is the product's
// action (guard, plan, preview ticks, the transaction with the product's writer, the record) with a
// scripted user who ticks the default files and the conflicts the case overwrites. With the command
// scan's index kept by a file watcher and shared between the run's commands, and without a watcher
// (every file statted before and after each command).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { defaultTicks, restoreWrites, type RestorePlan } from '../../../../src/actions/restore/plan';
import { testActions } from '../../../support/actions';
import { owner } from '../../loop/support';
import { drive, read, same, workspace, type Call } from '../../runner/files/journalSupport';
import { disposeIndexes, SCAN_MODES } from '../../runner/files/scanSupport';
import { trials } from '../../../support/trials';

const notHere = async () => Promise.reject(new Error('no runner in this test'));

const PATHS = ['a.txt', 'b.txt', 'sub/c.txt', 'd.bin'] as const;
const NEVER_TOUCHED = 'z-user-only.txt';
type P = (typeof PATHS)[number];

type Op =
  | { t: 'write'; path: P; content: string }
  | { t: 'cmdWrite'; path: P; content: string }
  | { t: 'cmdBin'; path: P; n: number }
  | { t: 'rm'; path: P }
  | { t: 'mv'; from: P; to: P };

const content = fc
  .tuple(fc.constantFrom('x', 'yy', 'multi\nline', 'crlf\r\nline'), fc.nat(99))
  .map(([s, n]) => `${s}-${n}`);
const pathArb = fc.constantFrom(...PATHS);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant('write' as const), path: pathArb, content }),
  fc.record({ t: fc.constant('cmdWrite' as const), path: pathArb, content }),
  fc.record({ t: fc.constant('cmdBin' as const), path: pathArb, n: fc.nat(255) }),
  fc.record({ t: fc.constant('rm' as const), path: pathArb }),
  fc.record({ t: fc.constant('mv' as const), from: pathArb, to: pathArb }),
);
/** A user edit before step `step`: new content, or a deletion (null). */
const userEdit = fc.record({
  step: fc.integer({ min: 1, max: 6 }),
  path: pathArb,
  content: fc.option(content, { nil: null }),
});

function toCall(o: Op): Call {
  const q = (s: string) => `'${s}'`; // contents hold no quotes
  const mk = 'mkdir -p sub';
  switch (o.t) {
    case 'write':
      return { name: 'write_file', arguments: { path: o.path, content: `A:${o.content}` } };
    case 'cmdWrite':
      return { name: 'run_command', arguments: { command: `${mk} && printf '%s' ${q(`C:${o.content}`)} > ${o.path}` } };
    case 'cmdBin':
      return {
        name: 'run_command',
        arguments: { command: `${mk} && printf '\\000\\377\\${o.n.toString(8).padStart(3, '0')}' > ${o.path}` },
      };
    case 'rm':
      return { name: 'run_command', arguments: { command: `rm -f ${o.path}` } };
    case 'mv':
      return { name: 'run_command', arguments: { command: `${mk} && (mv ${o.from} ${o.to} 2>/dev/null || true)` } };
  }
}

type Writer = 'agent-known' | 'agent-unknown' | 'user' | 'restore';

for (const mode of SCAN_MODES) {
  describe(`file restore (property), commands scanned ${mode.name}: no user edit lost, agent-only files back to the checkpoint`, function () {
    this.timeout(300_000);
    afterEach(disposeIndexes);

    it('holds for random agent edits, user edits, command changes and repeated restores', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(op, { minLength: 1, maxLength: 6 }),
          fc.array(userEdit, { maxLength: 4 }),
          fc.boolean(),
          fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.subarray([...PATHS])), {
            minLength: 1,
            maxLength: 3,
          }),
          async (ops, edits, withGit, restores) => {
            const committed = { 'a.txt': 'I:a', 'sub/c.txt': 'I:c', [NEVER_TOUCHED]: 'mine' };
            const ws = workspace(committed, { git: withGit });
            const all = [...PATHS, NEVER_TOUCHED];
            const snapshots = new Map<number, Map<string, Buffer | null>>();
            /** Per path, who wrote it after each checkpoint: [seq of the checkpoint before the write, writer]. */
            const writes = new Map<string, [number, Writer][]>(all.map((p) => [p, []]));
            const lastAgent = new Map<string, Buffer | null>();
            let prev = read(ws, all);
            let lastSeq = 0;
            const attribute = (writer: (p: string, before: Buffer | null) => Writer) => {
              const now = read(ws, all);
              for (const p of all) {
                if (same(prev.get(p), now.get(p))) continue;
                const w = writer(p, prev.get(p) ?? null);
                writes.get(p)!.push([lastSeq, w]);
                if (w.startsWith('agent')) lastAgent.set(p, now.get(p) ?? null);
              }
              prev = now;
            };
            const knownBefore = (p: string, before: Buffer | null) =>
              before === null ||
              (lastAgent.has(p) && same(lastAgent.get(p), before)) ||
              (withGit && p in committed && same(before, Buffer.from((committed as Record<string, string>)[p]!)));
            const agentWriter = (p: string, before: Buffer | null): Writer =>
              knownBefore(p, before) ? 'agent-known' : 'agent-unknown';
            const applyEditsBefore = (step: number) => {
              for (const e of edits.filter((x) => x.step === step)) {
                const abs = path.join(ws, e.path);
                if (e.content === null) fs.rmSync(abs, { force: true });
                else {
                  fs.mkdirSync(path.dirname(abs), { recursive: true });
                  fs.writeFileSync(abs, `U:${e.content}`);
                }
              }
              attribute(() => 'user');
            };
            const calls = ops.map(toCall);
            const onPhase = (seq: number, phase: string, step: number) => {
              // The step's tool call ran after its pre_tool_batch checkpoint (still lastSeq here).
              if (phase === 'post_tool_batch')
                attribute((p, b) => (ops[step - 1]!.t === 'write' ? 'agent-known' : agentWriter(p, b)));
              lastSeq = seq;
              snapshots.set(seq, read(ws, all));
              if (phase === 'step_started') applyEditsBefore(step);
            };
            const index = mode.index(ws);
            const { store, runId } = await drive(ws, calls, { onPhase, ...(index ? { index } : {}) });
            const idle = { isActive: () => false, resume: notHere, decideApprovals: notHere };
            const t = testActions({ store, runner: idle, workspace: ws, owner: owner('restore') });

            for (const [at, overwrite] of restores) {
              const toSeq = Math.max(1, Math.ceil(at * lastSeq));
              const before = read(ws, all);
              let chosen = new Set<string>();
              t.editor.ticks = (plan) => {
                chosen = new Set(overwrite.filter((p) => plan.files.some((f) => f.path === p && f.overwritable)));
                return new Set([...defaultTicks(plan), ...chosen]);
              };
              const previewed = t.editor.previews.length;
              await t.actions.restore.run({ runId, seq: toSeq }, { rewind: false });
              // No preview: the guard found no file change after the checkpoint (nothing to restore).
              const plan: RestorePlan = t.editor.previews[previewed] ?? { toSeq, files: [], notes: [] };
              assert.deepEqual(
                t.notices.said.filter((m) => !m.startsWith('info: Restored') && !/nothing to restore/.test(m)),
                [],
                'no error, nothing changed under the preview',
              );
              const after = read(ws, all);
              const expected = snapshots.get(toSeq)!;
              for (const p of all) {
                const since = writes
                  .get(p)!
                  .filter(([s]) => s >= toSeq)
                  .map(([, w]) => w);
                const ctx = `${p} after restore to #${toSeq} (writes since: ${since.join(',')}; ops ${JSON.stringify(ops)}; edits ${JSON.stringify(edits)})`;
                const lastWriter = writes.get(p)!.at(-1)?.[1];
                // A file is the user's when its content is not what the agent last left there: edited
                // and then put back byte for byte (or created and deleted again where the agent had
                // deleted it) is the agent's version, which the restore may revert — no byte of the
                // user's is lost, and nothing could tell the two apart (README, "exactly what the agent left").
                const agentsAgain = lastAgent.has(p) && same(before.get(p), lastAgent.get(p));
                if (lastWriter === 'user' && !agentsAgain && !chosen.has(p))
                  assert.ok(same(after.get(p), before.get(p)), `user edit lost: ${ctx}`);
                if (!plan.files.some((f) => f.path === p))
                  assert.ok(same(after.get(p), before.get(p)), `never journaled yet changed: ${ctx}`);
                if (since.every((w) => w === 'agent-known' || w === 'restore'))
                  assert.ok(same(after.get(p), expected.get(p)), `agent-only file not restored: ${ctx}`);
              }
              for (const p of all) {
                if (same(after.get(p), before.get(p))) continue;
                writes.get(p)!.push([lastSeq, 'restore']);
                lastAgent.delete(p); // the journal of commands knows the agent's own writes only
              }
              lastSeq = (await store.latest(runId)).seq; // restores follow the run's last checkpoint
              assert.ok(restoreWrites(plan, chosen).size <= plan.files.length);
            }
            assert.ok(
              same(read(ws, [NEVER_TOUCHED]).get(NEVER_TOUCHED), Buffer.from('mine')),
              'the file nobody journaled is untouched',
            );
            disposeIndexes();
            fs.rmSync(ws, { recursive: true, force: true });
          },
        ),
        { numRuns: trials(10, 'AW_PROPERTY_RUNS'), endOnFailure: true },
      );
    });
  });
}
