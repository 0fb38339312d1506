// The run view's state reducer (media/src/runView/viewState.ts), the webview's own code: streamed
// text, paging, the first state with its items, the saved scroll position and reveals.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  type Effects,
  initialState,
  LIVE_KEY,
  PAGE,
  PAGE_RETRY_MS,
  reduce,
  type ViewEvent,
  type ViewState,
} from '../../../../media/src/runView/viewState';
import type { OutlineEntry, TranscriptItem } from '../../../../src/views/run/items';
import type { StateMessage } from '../../../../src/views/run/protocol';

const RUN = 'run-1';

function userItem(i: number, text = `message ${i}`): TranscriptItem {
  return { kind: 'user', key: `k${i}`, runId: RUN, text, queued: false };
}

function outline(n: number, from = 0): OutlineEntry[] {
  return Array.from({ length: n }, (_, i) => [`k${from + i}`, 40] as OutlineEntry);
}

function state(o: Partial<StateMessage> & { outline: OutlineEntry[] }): StateMessage {
  return {
    type: 'state',
    version: 1,
    threadId: 't',
    focusRunId: RUN,
    runs: [],
    partial: false,
    page: null,
    readOnly: null,
    composerHint: '',
    approvalMode: null,
    streaming: null,
    ...o,
  };
}

/** Runs events through the reducer, keeping every effect. */
function run(events: ViewEvent[], from: ViewState = initialState(undefined)): { s: ViewState; fx: Effects[] } {
  let s = from;
  const fx: Effects[] = [];
  for (const e of events) {
    const r = reduce(s, e);
    s = r.state;
    fx.push(r.effects);
  }
  return { s, fx };
}

const delta = (text: string, step = 3, kind: 'text' | 'reasoning' = 'text'): ViewEvent => ({
  type: 'delta',
  runId: RUN,
  step,
  kind,
  text,
});

describe('run view state: streamed text', () => {
  it('deltas wait for a frame, drawn once per frame; reasoning apart', () => {
    const { s, fx } = run([
      { type: 'state', message: state({ outline: outline(2), streaming: { runId: RUN, step: 3 } }) },
      delta('Hel'),
      delta('lo'),
      delta('think', 3, 'reasoning'),
    ]);
    assert.deepEqual([s.live?.text, s.live?.buffered, s.live?.bufferedReasoning], ['', 'Hello', 'think']);
    assert.ok(
      fx.slice(1).every((f) => f.frame && f.redraw.length === 0),
      'each delta asks for a frame, draws nothing',
    );
    const drawn = reduce(s, { type: 'frame' });
    assert.deepEqual([drawn.state.live?.text, drawn.state.live?.reasoning], ['Hello', 'think']);
    assert.deepEqual(drawn.effects.redraw, [LIVE_KEY]);
    assert.equal(reduce(drawn.state, { type: 'frame' }).effects.redraw.length, 0, 'nothing new: nothing drawn');
  });

  it('the first delta of a new step adds the live row to the list; a state without streaming removes it', () => {
    const { s, fx } = run([{ type: 'state', message: state({ outline: outline(2) }) }, delta('A', 4)]);
    assert.deepEqual(fx[1]!.outline?.at(-1), [LIVE_KEY, 80]);
    const after = reduce(s, { type: 'state', message: state({ version: 2, outline: outline(3) }) });
    assert.equal(after.state.live, null);
    assert.deepEqual(
      after.effects.outline?.map((o) => o[0]),
      ['k0', 'k1', 'k2'],
      'the answer is an item of the thread now',
    );
  });

  it('what is drawn is always a prefix of the answer, and all of it in the end, however deltas, frames and states interleave (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.constantFrom('frame', 'state', 'none'), { minLength: 30, maxLength: 30 }),
        (answer, cuts, between) => {
          // The host streams the answer in chunks; now and then a state carries its text so far
          // (the deltas it had not sent yet are in it and are not sent after it).
          let s = reduce(initialState(undefined), {
            type: 'state',
            message: state({ outline: outline(1), streaming: { runId: RUN, step: 1 } }),
          }).state;
          let sent = 0;
          let version = 1;
          for (let i = 0; sent < answer.length; i++) {
            const n = Math.min(cuts[i % cuts.length]!, answer.length - sent);
            const what = between[i % between.length];
            if (what === 'state') {
              const streaming = { runId: RUN, step: 1, text: answer.slice(0, sent + n), reasoning: '' };
              s = reduce(s, {
                type: 'state',
                message: state({ version: ++version, outline: outline(1), streaming }),
              }).state;
            } else s = reduce(s, delta(answer.slice(sent, sent + n), 1)).state;
            sent += n;
            if (what === 'frame') s = reduce(s, { type: 'frame' }).state;
            assert.ok(answer.startsWith(s.live!.text), `drawn: ${JSON.stringify(s.live!.text)}`);
            assert.ok(answer.startsWith(s.live!.text + s.live!.buffered), 'and with what waits');
          }
          s = reduce(s, { type: 'frame' }).state;
          assert.equal(s.live!.text, answer);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('run view state: paging', () => {
  const long = outline(200);
  const end = { from: 120, items: Array.from({ length: 80 }, (_, i) => userItem(120 + i)) };

  it('the first state carries the items of the end: nothing to ask for there; scrolled up, one request per page', () => {
    let { s, fx } = run([{ type: 'state', message: state({ outline: long, page: end }) }]);
    assert.equal(s.items.size, 80);
    assert.deepEqual(fx[0]!.restore, null, 'no saved position: at the end');
    let r = reduce(s, { type: 'visible', from: 150, to: 200, now: 0 });
    assert.deepEqual(r.effects.requests, [], 'the end is there');
    r = reduce(r.state, { type: 'visible', from: 30, to: 90, now: 0 });
    assert.deepEqual(
      r.effects.requests,
      [
        { from: 0, to: PAGE, version: 1 },
        { from: PAGE, to: 2 * PAGE, version: 1 },
        { from: 2 * PAGE, to: 3 * PAGE, version: 1 },
      ],
      'the pages holding 30–89',
    );
    s = r.state;
    r = reduce(s, { type: 'visible', from: 30, to: 90, now: 100 });
    assert.deepEqual(r.effects.requests, [], 'asked already');
    r = reduce(s, { type: 'visible', from: 30, to: 50, now: PAGE_RETRY_MS + 1 });
    assert.deepEqual(
      r.effects.requests.map((q) => q.from),
      [0, PAGE],
      'unanswered for long: asked again',
    );
    ({ s, fx } = run(
      [{ type: 'page', result: { version: 1, from: 0, items: Array.from({ length: PAGE }, (_, i) => userItem(i)) } }],
      s,
    ));
    assert.equal(s.items.get('k5')?.kind, 'user');
    assert.equal(fx[0]!.redraw.length, PAGE);
    assert.equal(s.requested.has(0), false);
  });

  it('a page of another version is dropped and the list looks again; the same item again is not redrawn', () => {
    const { s } = run([{ type: 'state', message: state({ outline: long, page: end }) }]);
    const stale = reduce(s, { type: 'page', result: { version: 7, from: 0, items: [userItem(0)] } });
    assert.equal(stale.state.items.has('k0'), false);
    assert.equal(stale.effects.refresh, true);
    const same = reduce(s, { type: 'page', result: { version: 1, from: 120, items: [userItem(120)] } });
    assert.deepEqual(same.effects.redraw, []);
    const changed = reduce(s, { type: 'page', result: { version: 1, from: 120, items: [userItem(120, 'edited')] } });
    assert.deepEqual(changed.effects.redraw, ['k120']);
  });

  it('a new version keeps showing the items read before, and asks for the shown pages again', () => {
    const { s } = run([
      { type: 'state', message: state({ outline: long, page: end }) },
      { type: 'state', message: state({ version: 2, outline: long }) },
    ]);
    assert.equal(s.items.get('k150')?.kind, 'user', 'still shown (no placeholder)');
    const r = reduce(s, { type: 'visible', from: 150, to: 200, now: 0 });
    assert.deepEqual(
      r.effects.requests.map((q) => [q.from, q.version]),
      [
        [120, 2],
        [160, 2],
      ],
    );
  });

  it('the end first (a partial outline), then the whole thread: items read for the end stay', () => {
    const tail = outline(80, 120);
    const { s, fx } = run([
      {
        type: 'state',
        message: state({ outline: tail, partial: true, page: { from: 0, items: end.items } }),
      },
      { type: 'state', message: state({ version: 2, outline: long, page: { from: 120, items: end.items } }) },
    ]);
    assert.equal(fx[0]!.outline?.length, 80);
    assert.equal(fx[1]!.outline?.length, 200);
    assert.deepEqual(fx[1]!.redraw, [LIVE_KEY], 'no item changed');
    assert.deepEqual(reduce(s, { type: 'visible', from: 150, to: 200, now: 0 }).effects.requests, []);
  });
});

describe('run view state: saved position and reveals', () => {
  it('a saved position is restored once the outline holds its item; a whole outline without it opens at the end', () => {
    const saved = { runId: RUN, threadId: 't', anchor: { key: 'k10', offset: 12 } };
    let { fx } = run(
      [
        { type: 'state', message: state({ outline: outline(20, 100), partial: true }) },
        { type: 'state', message: state({ version: 2, outline: outline(200) }) },
        { type: 'state', message: state({ version: 3, outline: outline(200) }) },
      ],
      initialState(saved),
    );
    assert.equal(fx[0]!.restore, undefined, 'the end alone does not hold it: wait');
    assert.deepEqual(fx[1]!.restore, saved.anchor);
    assert.equal(fx[2]!.restore, undefined, 'once');
    ({ fx } = run([{ type: 'state', message: state({ outline: outline(5) }) }], initialState(saved)));
    assert.equal(fx[0]!.restore, null);
  });

  it('an item to reveal waits for the outline that holds it', () => {
    const { fx } = run([
      { type: 'reveal', key: 'k150' },
      { type: 'state', message: state({ outline: outline(20, 180), partial: true }) },
      { type: 'state', message: state({ version: 2, outline: outline(200) }) },
    ]);
    assert.deepEqual(
      fx.map((f) => f.reveal),
      [undefined, undefined, 'k150'],
    );
  });
});
