// What the host sends the run view is bounded (src/views/run/bounds.ts): text cut with a note that
// says how much is left out, and model-controlled JSON printed as JSON.stringify would, within a
// depth and a length — never the recursion V8's own printer overflows on.
import assert from 'node:assert/strict';
import {
  boundItem,
  cut,
  FIELD_MAX_CHARS,
  JSON_MAX_DEPTH,
  prettyJson,
  TEXT_MAX_CHARS,
} from '../../../../src/views/run/bounds';
import type { TranscriptItem } from '../../../../src/views/run/items';

const nested = (depth: number) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown;

describe('run view bounds', () => {
  it('prints JSON as JSON.stringify(v, null, 2) does', () => {
    const values: unknown[] = [
      { path: 'a.txt', n: 1.5, ok: true, none: null, list: [1, 'two', { three: [] }], empty: {} },
      ['a "quoted"\nline', '\u2028', 'é😀', -0, 1e21],
      'just a string',
      42,
      null,
      nested(JSON_MAX_DEPTH),
    ];
    for (const v of values) assert.deepEqual(prettyJson(v), { text: JSON.stringify(v, null, 2), whole: true });
  });

  it('JSON nested deeper than its bound is not printed (null), however deep: 10,000 levels overflow V8’s own printer', () => {
    assert.equal(prettyJson(nested(JSON_MAX_DEPTH + 1)), null);
    const deep = nested(10_000);
    assert.throws(() => JSON.stringify(deep, null, 2), RangeError);
    assert.equal(prettyJson(deep), null);
    assert.equal(prettyJson({ fine: 1, deep }), null);
  });

  it('long JSON is cut within its bound, with a note, and says it is not whole', () => {
    const v = { items: Array.from({ length: 50_000 }, (_, i) => ({ i, name: `item ${i}` })) };
    const whole = JSON.stringify(v, null, 2);
    const shown = prettyJson(v, { maxChars: 10_000 })!;
    assert.equal(shown.whole, false);
    assert.ok(shown.text.length <= 10_000, `${shown.text.length}`);
    assert.match(shown.text, /\n… \(cut at [\d,]+ characters\)$/);
    assert.ok(whole.startsWith(shown.text.slice(0, shown.text.lastIndexOf('\n…'))));
  });

  it('cut: at most the bound, a note of how much more, the same when cut again, never half a surrogate pair', () => {
    const s = 'x'.repeat(250_000);
    const once = cut(s, 1000);
    assert.ok(once.length <= 1000);
    const kept = once.indexOf('\n');
    assert.equal(once.slice(kept), `\n… (${(250_000 - kept).toLocaleString('en-US')} more characters not shown)`);
    assert.equal(cut(once, 1000), once);
    assert.equal(cut('short', 1000), 'short');
    const emoji = cut('😀'.repeat(1000), 101);
    assert.doesNotMatch(emoji.slice(0, emoji.indexOf('\n')), /[\ud800-\udbff]$/);
  });

  it('an item: its long text to the text bound, every other string to the field bound', () => {
    const big = 'y'.repeat(5_000_000);
    const tool = boundItem({
      kind: 'tool',
      key: 'r:t:c',
      runId: 'r',
      step: 1,
      toolCallId: 'c',
      name: 'run_command',
      category: 'command',
      title: big,
      args: [{ name: big, value: big }],
      argumentsJson: big,
      argumentsEditable: false,
      status: 'done',
      output: big,
      outputChars: big.length,
      exitCode: 0,
      durationMs: 1,
      replayed: false,
      uncertain: false,
      approval: null,
      diff: [big],
      external: false,
      rich: false,
      progress: big,
      sandbox: big,
      changedFiles: [big],
      changedFilesTotal: 1,
    } satisfies TranscriptItem);
    assert.equal(tool.key, 'r:t:c');
    assert.equal(tool.outputChars, big.length);
    assert.ok(tool.argumentsJson.length <= TEXT_MAX_CHARS && tool.argumentsJson.length > FIELD_MAX_CHARS);
    for (const s of [
      tool.title,
      tool.args[0]!.name,
      tool.args[0]!.value,
      tool.output!,
      tool.diff![0]!,
      tool.progress!,
      tool.sandbox!,
      tool.changedFiles[0]!,
    ])
      assert.ok(s.length <= FIELD_MAX_CHARS && s.endsWith('more characters not shown)'));
    const answer = boundItem({
      kind: 'assistant',
      key: 'r:a:1',
      runId: 'r',
      step: 1,
      text: big,
      reasoning: big,
      final: true,
    });
    assert.ok(answer.text.length <= TEXT_MAX_CHARS && answer.text.length > FIELD_MAX_CHARS);
    assert.ok(answer.reasoning!.length <= TEXT_MAX_CHARS);
  });
});
