// Resume points (disk/resumePoint.ts): a long run resumed from its point holds what it needs to go on —
// and only that, the bytes before the point unread — goes on writing, and read whole afterwards is the
// run it would have been without points; a point that does not fit the files is never used.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AgentCheckpointCorruptionError } from '../../../src/store/api/errors';
import type { ChatMessage, ModelContext, ToolExecutionRecord } from '../../../src/store/api/schema';
import type { CheckpointStore, CorruptionReport } from '../../../src/store/api/types';
import { openDiskStoreReady, type DiskStoreOptions } from '../../../src/store/disk/store';
import { readFrame } from '../../../src/store/disk/frame';
import * as h from './helpers';

const ID = 'r-long';
const ME = h.owner('writer');
const POINTS = { resumePoints: { from: 0, every: 8 * 1024 } };
const NO_POINTS = { resumePoints: { from: Infinity, every: 0 } };

/** A run as the runner writes one: a step per call, its result and tool message, a condense every ten steps. */
class Writer {
  msgs: ChatMessage[] = [
    { role: 'system', content: 'you are careful' },
    { role: 'user', content: 'do the task' },
  ];
  execs: ToolExecutionRecord[] = [];
  mc: ModelContext | null = null;

  constructor(
    private readonly s: CheckpointStore,
    private readonly tick: () => void,
  ) {}

  async steps(from: number, to: number): Promise<void> {
    for (let step = from; step <= to; step++) {
      const call = `call_${step}`;
      if (step % 10 === 0) {
        const through = this.msgs.length - 4;
        this.mc = {
          stub_before: through,
          stub_chars: 2000,
          condense: { id: `condense-${step}`, pre_seq: 1, head: 2, through, summary: `summary ${step}`, step },
          learned_window: null,
          hold: false,
        };
      }
      this.msgs.push(h.assistantWithCall(step, call));
      this.tick();
      await this.s.append(ID, h.stepStarted(this.snap(step)));
      if (step % 7 === 2) {
        this.tick();
        await this.s.requestApproval(ID, {
          tool_call_id: call,
          step,
          tool_name: 'run_command',
          category: 'command',
          arguments: { step },
          input_hash: `ih-${call}`,
          uncertain: false,
          reason: 'commands ask',
        });
        this.tick();
        await this.s.decideApproval(ID, call, { kind: 'approve', reason: null, input_hash: `ih-${call}` });
      }
      this.tick();
      await this.s.recordIntent(ID, h.commandIntent(call, step));
      const output = `output of step ${step} `.padEnd(300, '.');
      this.tick();
      await this.s.recordResult(ID, call, { output, output_hash: `oh-${step}`, is_error: false, blob: null });
      this.msgs.push({ role: 'tool', tool_call_id: call, content: output });
      this.execs.push(h.toolExec(step, call));
    }
  }

  snap(step: number) {
    return h.snapshot(step, [...this.msgs], { tool_executions: [...this.execs], model_context: this.mc });
  }
}

/** A store on `dir` with a clock that moves only when told (two stores given the same script see the same times). */
async function open(dir: string, o: DiskStoreOptions, reports: CorruptionReport[] = []) {
  let t = 1_700_000_000_000;
  const s = await openDiskStoreReady(dir, {
    ...o,
    now: () => t,
    onEvent: (e) => void (e.kind === 'corruption' && reports.push(e.report)),
  });
  return { s, tick: () => void (t += 1000) };
}

/** A store on `dir` holding run ID (created, started), written for `steps` steps (Writer). */
async function written(dir: string, o: DiskStoreOptions, steps: number) {
  const opened = await open(dir, o);
  await opened.s.createRun({ ...h.newRun('long'), run_id: ID }, ME);
  await opened.s.append(ID, h.runStarted());
  const w = new Writer(opened.s, opened.tick);
  if (steps > 0) await w.steps(1, steps);
  return { ...opened, w };
}

/** The point file of run ID in `dir`, as written. */
function pointOf(dir: string): { segment: string; offset: number; next: number } {
  const buf = fs.readFileSync(path.join(dir, 'runs', ID, 'resume.json'));
  const r = readFrame(buf, 0);
  assert.ok(r.ok);
  return r.frame.value as { segment: string; offset: number; next: number };
}

describe('store: resume points', function () {
  this.timeout(60_000);
  const tmp = h.suiteTmp();

  it('a long run resumes from its point: its newest snapshot whole but for the messages a condense summarised and the executions before the first call the model sees; the bytes before the point unread, their damage found when the run is read whole', async () => {
    const dir = tmp('aw-rp-');
    const { s, w } = await written(dir, POINTS, 60);
    await s.whenIdle(ID);
    await s.flush(); // (the index knows the run: the copy's store does not read it to list it)
    const whole = (await s.loadSnapshot(ID)).snapshot;
    const crash = tmp('aw-rp-crash-');
    fs.cpSync(dir, crash, { recursive: true }); // what a crash leaves: the run still held
    await s.close();

    const c = await openDiskStoreReady(crash);
    const r = await c.loadResumeSnapshot(ID);
    await c.close();
    const point = pointOf(crash);
    // The condense of step 60 summarised messages[2, through): those, and executions of the calls before.
    const through = w.mc!.condense!.through;
    assert.deepEqual(r.omitted.messages, { from: 2, to: through }, JSON.stringify(r.omitted));
    const seen = new Set(whole.messages.slice(through).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
    const firstSeen = whole.tool_executions.findIndex((e) => seen.has(e.tool_call_id));
    assert.deepEqual(r.omitted.tool_executions, { from: 0, to: firstSeen });
    assert.ok(firstSeen > 50, `${firstSeen}`);
    assert.equal(r.snapshot.messages.length, whole.messages.length);
    assert.equal(r.snapshot.tool_executions.length, whole.tool_executions.length);
    for (const f of ['messages', 'tool_executions'] as const) {
      const o = r.omitted[f];
      (whole[f] as unknown[]).forEach((item, i) => {
        if (i >= o.from && i < o.to) assert.ok(!(i in r.snapshot[f]), `${f}[${i}] is left out`);
        else assert.deepEqual(r.snapshot[f][i], item, `${f}[${i}]`);
      });
    }
    const { messages: _m, tool_executions: _t, ...header } = whole;
    const { messages: _rm, tool_executions: _rt, ...rheader } = r.snapshot;
    assert.deepEqual(rheader, header);

    // Every byte before the point damaged (the segment's head kept): the resume reads none of them.
    const segFile = path.join(crash, 'runs', ID, point.segment);
    const seg = fs.readFileSync(segFile);
    const headEnd = seg.indexOf(0x0a) + 1 + 256; // (the header frame, then the witness area)
    seg.fill(0x78, headEnd + 1, point.offset - 1);
    fs.writeFileSync(segFile, seg);
    const snapFile = path.join(crash, 'runs', ID, 'snapshot.json');
    if (fs.existsSync(snapFile)) fs.writeFileSync(snapFile, 'x'.repeat(fs.statSync(snapFile).size));
    const reports: CorruptionReport[] = [];
    const d = await open(crash, {}, reports);
    const again = await d.s.loadResumeSnapshot(ID);
    assert.deepEqual(again, r);
    assert.deepEqual(reports, []);
    // Read whole (the run's history asked for): the damage is found, reported, and the read refused.
    await h.rejects(d.s.loadSnapshot(ID, 3), AgentCheckpointCorruptionError);
    assert.ok(reports.length > 0, 'the damage is reported');
    await d.s.close();
  });

  it('a run acquired from its point goes on writing; a write that needs what it left out — a rewind into it, an approval or a result of an earlier step — reads it whole first; read whole afterwards it is the run written without points', async () => {
    type Disturb = (s: CheckpointStore, w: Writer, tick: () => void) => Promise<unknown>;
    const script = async (dir: string, o: DiskStoreOptions, disturb: Disturb) => {
      const a = await written(dir, o, 45);
      const { w } = a;
      await a.s.close(); // (lets the run go)
      const b = await open(dir, o);
      const lease = await b.s.acquire(ID, ME);
      const before = (await b.s.loadResumeSnapshot(ID)).omitted.messages;
      Object.assign(w, { s: b.s, tick: b.tick });
      await w.steps(46, 50);
      const still = (await b.s.loadResumeSnapshot(ID)).omitted.messages;
      b.tick();
      const answer = await disturb(b.s, w, b.tick);
      const after = (await b.s.loadResumeSnapshot(ID)).omitted.messages;
      await w.steps(51, 54);
      await lease.release();
      await b.s.close();
      const c = await openDiskStoreReady(dir, NO_POINTS);
      const exported = await c.exportRun(ID);
      await c.close();
      // (the same data; an effect's keys may come in another order, as the codec writes a result whole or as a difference)
      return { body: h.canonical((exported as { body: unknown }).body), answer, before, still, after };
    };
    const disturbances: Record<string, Disturb> = {
      'an approval of an earlier step asked for again': (s) =>
        s.requestApproval(ID, {
          tool_call_id: 'call_2',
          step: 2,
          tool_name: 'run_command',
          category: 'command',
          arguments: { step: 2 },
          input_hash: 'ih-call_2',
          uncertain: false,
          reason: 'commands ask',
        }),
      'a result of an earlier step recorded again': (s) =>
        s
          .recordResult(ID, 'call_3', { output: 'again', output_hash: 'oh', is_error: false, blob: null })
          .catch((err: Error) => err.name),
      'a rewind to before the condense': async (_s, w) => {
        w.msgs = w.msgs.slice(0, 5);
        w.mc = null;
        w.execs = w.execs.slice(0, 1);
        await w.steps(100, 100);
        return 'rewound';
      },
    };
    const none = { from: 0, to: 0 };
    for (const [what, disturb] of Object.entries(disturbances)) {
      const withPoints = await script(tmp('aw-rp-a-'), POINTS, disturb);
      const without = await script(tmp('aw-rp-b-'), NO_POINTS, disturb);
      assert.ok(withPoints.before.to > 2 && withPoints.still.to > 2, `${what}: resumed from its point, and goes on so`);
      assert.deepEqual(withPoints.after, none, `${what}: read whole for it`);
      assert.deepEqual([without.before, without.after], [none, none]);
      assert.deepEqual(withPoints.answer, without.answer, what);
      assert.equal(withPoints.body, without.body, what);
    }
  });

  it('an owner that finds the history before its point damaged, when it needs it, reports it once, stops asking, and drops the point: the next acquire reads the run whole and records the loss', async () => {
    const dir = tmp('aw-rp-own-');
    const a = await written(dir, POINTS, 45);
    const { w } = a;
    await a.s.close();
    // The bytes before the point damaged (the segment's head kept), the snapshot too.
    const point = pointOf(dir);
    const segFile = path.join(dir, 'runs', ID, point.segment);
    const seg = fs.readFileSync(segFile);
    seg.fill(0x78, seg.indexOf(0x0a) + 1 + 256 + 1, point.offset - 1);
    fs.writeFileSync(segFile, seg);
    const snapFile = path.join(dir, 'runs', ID, 'snapshot.json');
    if (fs.existsSync(snapFile)) fs.writeFileSync(snapFile, 'x'.repeat(fs.statSync(snapFile).size));

    const reports: CorruptionReport[] = [];
    const b = await open(dir, POINTS, reports);
    const lease = await b.s.acquire(ID, ME);
    Object.assign(w, { s: b.s, tick: b.tick });
    await w.steps(46, 48); // (what the point holds is enough to go on)
    assert.deepEqual(reports, []);
    const old = () =>
      b.s.recordResult(ID, 'call_3', { output: 'again', output_hash: 'oh', is_error: false, blob: null });
    await h.rejects(old(), AgentCheckpointCorruptionError);
    assert.equal(reports.length, 1, 'reported once');
    assert.ok(!fs.existsSync(path.join(dir, 'runs', ID, 'resume.json')), 'the point is dropped');
    await h.rejects(old(), AgentCheckpointCorruptionError);
    assert.equal(reports.length, 1, 'not read again');
    await lease.release();
    await b.s.close();

    const c = await open(dir, POINTS, reports);
    await c.s.acquire(ID, ME);
    assert.ok(reports.length > 1, 'the whole read reports the damage');
    const run = await c.s.getRun(ID);
    assert.ok(run?.damage, 'and the run records what was lost');
    await c.s.close();
  });

  it('a point that does not fit the files is never used: damaged, superseded by a compaction, or followed by a tail the witness says was longer — the run is read whole, and judged as without points', async () => {
    const dir = tmp('aw-rp-f-');
    const { s } = await written(dir, POINTS, 40);
    await s.whenIdle(ID);
    const copy = (tag: string) => {
      const to = tmp(`aw-rp-${tag}-`);
      fs.cpSync(dir, to, { recursive: true });
      return to;
    };
    const resumeOf = async (d: string) => {
      const reports: CorruptionReport[] = [];
      const o = await open(d, {}, reports);
      const r = await o.s.loadResumeSnapshot(ID).catch((err: Error) => err);
      await o.s.close();
      return { r, reports };
    };
    const held = {
      messages: { from: 0, to: 0 },
      tool_executions: { from: 0, to: 0 },
      subagent_executions: { from: 0, to: 0 },
    };

    // Damaged: one byte of the point file.
    const damaged = copy('damaged');
    const pf = path.join(damaged, 'runs', ID, 'resume.json');
    const bytes = fs.readFileSync(pf);
    bytes[Math.floor(bytes.length / 2)]! ^= 0x20;
    fs.writeFileSync(pf, bytes);
    const d1 = await resumeOf(damaged);
    assert.ok(!(d1.r instanceof Error) && JSON.stringify(d1.r.omitted) === JSON.stringify(held), 'read whole');
    assert.deepEqual(d1.reports, []);

    // The tail after the point cut short by a frame the witness counted: the loss reported as without points.
    const cut = (d: string) => {
      const seg = path.join(d, 'runs', ID, pointOf(dir).segment);
      const buf = fs.readFileSync(seg);
      let end = buf.length;
      while (end > 0 && buf[end - 1] === 0) end--; // (room written ahead)
      const lastFrame = buf.lastIndexOf(0x0a, end - 2) + 1;
      fs.writeFileSync(seg, buf.subarray(0, lastFrame));
    };
    const lost = copy('lost');
    cut(lost);
    const lostNoPoint = copy('lost-nopoint');
    cut(lostNoPoint);
    fs.rmSync(path.join(lostNoPoint, 'runs', ID, 'resume.json'));
    const [withPoint, withoutPoint] = [await resumeOf(lost), await resumeOf(lostNoPoint)];
    assert.equal(withPoint.reports.length, 1);
    assert.equal(withPoint.reports[0]!.data_lost, true);
    const strip = (r: CorruptionReport) => ({ ...r, quarantined: [], detected_ms: 0 });
    assert.deepEqual(withPoint.reports.map(strip), withoutPoint.reports.map(strip));

    // Superseded: the run compacted after its point (a new segment); the old point names one that is gone.
    await s.compact(ID);
    const superseded = copy('superseded');
    const d3 = await resumeOf(superseded);
    assert.ok(!(d3.r instanceof Error) && JSON.stringify(d3.r.omitted) === JSON.stringify(held), 'read whole');
    assert.deepEqual(d3.reports, []);
    await s.close();
  });

  it('points are written off the step, bounded by the log: a short run has none, a long one about one for each `every` bytes its log grows', async () => {
    const small = tmp('aw-rp-small-');
    const a = await written(small, {}, 30);
    await a.s.close();
    assert.ok(!fs.existsSync(path.join(small, 'runs', ID, 'resume.json')), 'a short run has no point');

    const long = tmp('aw-rp-count-');
    const b = await written(long, POINTS, 0);
    const { w } = b;
    const offsets = new Set<number>();
    for (let step = 1; step <= 80; step += 5) {
      await w.steps(step, step + 4);
      await b.s.whenIdle(ID);
      if (fs.existsSync(path.join(long, 'runs', ID, 'resume.json'))) offsets.add(pointOf(long).offset);
    }
    await b.s.close();
    const logBytes = h
      .listFiles(path.join(long, 'runs', ID))
      .filter((f) => f.startsWith('segment-') || f === 'snapshot.json')
      .reduce((n, f) => n + fs.statSync(path.join(long, 'runs', ID, f)).size, 0);
    assert.ok(offsets.size >= 3, `points written: ${offsets.size}`);
    assert.ok(offsets.size <= logBytes / POINTS.resumePoints.every + 2, `${offsets.size} points for ${logBytes} bytes`);
  });
});
