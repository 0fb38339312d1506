// Damage, then resume: the product's own loop over the disk store resumes runs whose
// history was damaged — every store file kind × every kind of damage, with side effects in the lost
// range. Nothing executes again without the user's decision; a finished run stays finished.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { openDiskStore } from '../../../src/store';
import type { CheckpointStore } from '../../../src/store/api/types';
import { parseSegment } from '../../../src/store/disk/segment';
import { WITNESS_AREA } from '../../../src/store/disk/witness';
import { lines, makeRunner, tmp } from './support';

const DAMAGES = ['truncate', 'bit-flip', 'zero-fill', 'delete', 'garbage'] as const;
type Damage = (typeof DAMAGES)[number];
const KINDS = [
  'index.json',
  'witness',
  'segment:witness',
  'segment:header',
  'commit:first',
  'commit:middle',
  'commit:last',
] as const;
type Kind = (typeof KINDS)[number] | 'snapshot';
const ALL_LINES = ['step 1', 'step 2', 'step 3'];

/** Damages a file, or only the bytes [at, end) of it (one frame of a segment; delete = its bytes cut out). */
function damageFile(file: string, how: Damage, seed: number, range?: { at: number; end: number }): void {
  const good = fs.readFileSync(file);
  const { at, end } = range ?? { at: 0, end: good.length };
  if (how === 'delete' && !range) return fs.rmSync(file);
  const part = good.subarray(at, end);
  let mid: Buffer;
  if (how === 'delete') mid = Buffer.alloc(0);
  else if (how === 'truncate') return fs.writeFileSync(file, good.subarray(0, at + Math.floor(part.length / 2)));
  else if (how === 'zero-fill') mid = Buffer.alloc(part.length);
  else if (how === 'garbage')
    mid = Buffer.from(Array.from({ length: part.length }, (_, i) => (i * 7919 + seed * 104729) & 0xff));
  else {
    mid = Buffer.from(part);
    const p = Math.floor(part.length / 2) + (seed % 13);
    mid[p] = mid[p]! ^ 0x10;
  }
  fs.writeFileSync(file, Buffer.concat([good.subarray(0, at), mid, good.subarray(end)]));
}

interface Pristine {
  store: string;
  /** The run's workspace (its snapshots name this path: cases reuse it, reset from `backup`). */
  workspace: string;
  backup: string;
  runId: string;
}

/** The append scenario (a side-effecting command per step) run by the product's loop, commands auto-approved. */
async function pristineRun(
  server: ModelServer,
  opts: { maxSteps?: number; compactAfterCommits?: number },
): Promise<Pristine> {
  const storeDir = tmp('dmg-store');
  const store = openDiskStore(
    storeDir,
    opts.compactAfterCommits ? { compactAfterCommits: opts.compactAfterCommits } : {},
  );
  const { runner, workspace } = makeRunner({
    baseURL: server.url,
    store,
    policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
  });
  const h = await runner.start({ task: 'append three lines', budget: { max_steps: opts.maxSteps ?? 10 } });
  await h.done;
  await store.close();
  const backup = tmp('dmg-ws-backup');
  fs.cpSync(workspace, backup, { recursive: true });
  return { store: storeDir, workspace, backup, runId: h.runId };
}

/** A fresh copy of the store, and the workspace put back as the pristine run left it. */
function copyOf(p: Pristine): Pristine {
  const store = tmp('dmg-case-store');
  fs.cpSync(p.store, store, { recursive: true });
  fs.rmSync(p.workspace, { recursive: true, force: true });
  fs.cpSync(p.backup, p.workspace, { recursive: true });
  return { ...p, store };
}

/** The file a kind of damage hits, and the byte range in it when it is one frame of the run's segment. */
function target(p: Pristine, kind: Kind): { file: string; range?: { at: number; end: number } } {
  const runDir = path.join(p.store, 'runs', p.runId);
  if (kind === 'index.json') return { file: path.join(p.store, 'index.json') };
  if (kind === 'witness') return { file: path.join(runDir, 'witness') };
  if (kind === 'snapshot') return { file: path.join(runDir, 'snapshot.json') };
  const seg = path.join(
    runDir,
    fs
      .readdirSync(runDir)
      .filter((n) => n.startsWith('segment-'))
      .sort()
      .at(-1)!,
  );
  const parsed = parseSegment(fs.readFileSync(seg));
  const frames = parsed.frames;
  const commits = frames.slice(1);
  const pick = {
    'segment:header': frames[0]!,
    'segment:witness': { start: parsed.witnessAt!, end: parsed.witnessAt! + WITNESS_AREA },
    'commit:first': commits[0]!,
    'commit:middle': commits[Math.floor(commits.length / 2)]!,
    'commit:last': commits[commits.length - 1]!,
  }[kind];
  return { file: seg, range: { at: pick.start, end: pick.end } };
}

/** A user who looks at log.txt: rejects what already happened, approves what did not. Returns how many were rejected. */
async function decideLikeAUser(
  runner: ReturnType<typeof makeRunner>['runner'],
  store: CheckpointStore,
  c: Pristine,
): Promise<{ state: string; rejected: number; asked: number }> {
  let out = await (await runner.resume(c.runId, { budget: { max_steps: 20 } })).done;
  let rejected = 0;
  let asked = 0;
  for (let i = 0; i < 10 && out.state === 'awaiting_approval'; i++) {
    const pending = await store.listApprovals(c.runId, { pendingOnly: true });
    assert.ok(
      pending.length > 0 && pending.every((a) => a.uncertain),
      `only "may already have run" calls come back to the user (${JSON.stringify(pending.map((a) => a.reason))})`,
    );
    // At the moment of asking, nothing was run twice.
    const seen = lines(path.join(c.workspace, 'log.txt'));
    assert.equal(new Set(seen).size, seen.length, `no command ran twice before the user decided: ${seen.join(', ')}`);
    asked += pending.length;
    const decisions = pending.map((a) => {
      const line = String((a.arguments as { command: string }).command).match(/step \d/)![0];
      const happened = seen.includes(line);
      if (happened) rejected++;
      return happened
        ? ({ kind: 'reject', toolCallId: a.tool_call_id, inputHash: a.input_hash, reason: 'it already ran' } as const)
        : ({ kind: 'approve', toolCallId: a.tool_call_id, inputHash: a.input_hash } as const);
    });
    out = (await (await runner.decideApprovals(c.runId, decisions))?.done) ?? {
      state: 'awaiting_approval' as const,
      runId: c.runId,
      detail: null,
      finalText: null,
      terminalResult: null,
    };
    // The raised budget lives in the snapshot the resume restored; a pause for approval before the
    // next snapshot leaves the old one stored, so a user raises it once more.
    if (out.state === 'paused_budget') out = await (await runner.resume(c.runId, { budget: { max_steps: 20 } })).done;
  }
  return { state: out.state, rejected, asked };
}

describe('agent loop: damage, then resume (every file kind × every damage, effects in the lost range)', function () {
  this.timeout(300_000);
  let server: ModelServer;
  let paused: Pristine;
  let finished: Pristine;
  let compacted: Pristine;

  before(async () => {
    server = await startModelServer({ scenario: 'append' });
    paused = await pristineRun(server, { maxSteps: 2 }); // stops on its budget after step 2: effects of steps 1–2 are in the log
    assert.deepEqual(lines(path.join(paused.workspace, 'log.txt')), ['step 1', 'step 2']);
    server.reset();
    finished = await pristineRun(server, {});
    server.reset();
    compacted = await pristineRun(server, { compactAfterCommits: 1 });
    assert.ok(
      fs.existsSync(path.join(compacted.store, 'runs', compacted.runId, 'snapshot.json')),
      'the finished run was compacted on release',
    );
  });
  after(async () => server?.close());

  it('a paused run: resume never repeats a side effect without the user; it completes with each effect exactly once', async () => {
    const rows: string[] = [];
    let seed = 1;
    for (const kind of KINDS) {
      for (const how of DAMAGES) {
        const c = copyOf(paused);
        const t = target(c, kind);
        damageFile(t.file, how, seed++, t.range);
        server.reset();
        const store = openDiskStore(c.store);
        const { runner } = makeRunner({
          baseURL: server.url,
          store,
          workspace: c.workspace,
          policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
        });
        const r = await decideLikeAUser(runner, store, c);
        const damage = (await store.getRun(c.runId))?.damage;
        await store.close();
        assert.equal(r.state, 'completed', `${kind} × ${how}`);
        assert.deepEqual(
          lines(path.join(c.workspace, 'log.txt')),
          ALL_LINES,
          `${kind} × ${how}: each effect exactly once`,
        );
        rows.push(
          `${kind.padEnd(14)} ${how.padEnd(10)} damage=${damage ? `effects_lost:${damage.effects_lost}` : 'none'} asked=${r.asked} declined=${r.rejected} llm=${server.stats().total}`,
        );
      }
    }
    console.log(`      damage then resume (paused run, ${rows.length} cases):\n        ${rows.join('\n        ')}`);
  });

  it('a finished run stays finished whatever was damaged: nothing runs, the model is not called', async () => {
    const rows: string[] = [];
    let seed = 100;
    const cases = [
      ...KINDS.map((k) => [finished, k] as const),
      [compacted, 'snapshot'] as const, // the compacted log: one file holding every commit
    ];
    for (const [pristine, kind] of cases) {
      for (const how of DAMAGES) {
        const c = copyOf(pristine);
        const t = target(c, kind);
        damageFile(t.file, how, seed++, t.range);
        server.reset();
        const store = openDiskStore(c.store);
        const { runner } = makeRunner({
          baseURL: server.url,
          store,
          workspace: c.workspace,
          policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
        });
        const out = await (await runner.resume(c.runId)).done;
        const run = (await store.getRun(c.runId))!;
        await store.close();
        const label = `${pristine === compacted ? 'compacted ' : ''}${kind} × ${how}`;
        assert.equal(out.state, 'completed', `${label}: stays finished (${out.detail})`);
        assert.equal(server.stats().total, 0, `${label}: the model is not called`);
        assert.deepEqual(lines(path.join(c.workspace, 'log.txt')), ALL_LINES, `${label}: nothing ran again`);
        rows.push(
          `${label.padEnd(26)} ${run.damage ? `damage recorded (effects_lost: ${run.damage.effects_lost})` : 'no data lost'}`,
        );
      }
    }
    console.log(`      damage then resume (finished run, ${rows.length} cases):\n        ${rows.join('\n        ')}`);
  });
});
