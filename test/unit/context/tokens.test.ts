// Counting tokens (o200k_base) stays exact where it is cheap and bounded beyond: ordinary text is
// counted exactly as the API counts it, a long "word" (one pre-token, whose BPE merge is quadratic)
// and a text past the exact part are counted without holding up the event loop, and an estimate
// never falls below the exact count.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countText, EXACT_CHARS } from '../../../src/runner/context/tokens';
import { StallSampler, mb } from '../../support/stallSampler';
import { REPO } from '../loop/support';

/** As the API counts a message's text: special tokens' spellings are plain text. */
const exact = (text: string): number => countTokens(text, { disallowedSpecial: new Set() });

/** Lowercase letters (one pre-token for o200k, the costliest kind), the same every run. */
function word(chars: number): string {
  let x = 7;
  const out: string[] = [];
  for (let i = 0; i < chars; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out.push(String.fromCharCode(97 + (x % 26)));
  }
  return out.join('');
}

describe('token counting: exact where cheap, bounded beyond', function () {
  this.timeout(120_000);
  before(() => countText('load the ranks')); // once per process, not the input's cost

  it('ordinary text counts exactly as o200k does — the repository’s own files, and text that spells a special token', async () => {
    const files = execFileSync('git', ['ls-files', 'src', 'docs', 'README.md'], { cwd: REPO, encoding: 'utf8' })
      .split('\n')
      .filter((f) => /\.(ts|md|json)$/.test(f));
    let counted = 0;
    for (const f of files) {
      const text = fs.readFileSync(path.join(REPO, f), 'utf8');
      if (text.length > EXACT_CHARS) continue;
      assert.equal(await countText(text), exact(text), f);
      counted++;
    }
    assert.ok(counted > 100, `${counted} files compared`);
    // A model may write it and a repository file may hold it: it is text, as the API counts it.
    const special = 'The end of a document is marked <|endoftext|> in some corpora; <|im_start|> too.';
    assert.equal(await countText(special), exact(special));
    assert.equal(await countText(special.repeat(50)), exact(special.repeat(50)));
  });

  it('a long word and a text past the exact part are counted without stalling the host, never below the exact count', async () => {
    const cases = [
      { name: 'a 64 KB word', text: word(64 * 1024) },
      { name: 'a 1 MB word', text: word(1024 * 1024) },
      // Flat, as JSON.parse makes strings ('a'.repeat makes a rope, which any first read copies whole).
      { name: 'a 100 MB word', text: Buffer.from('a'.repeat(100 * 1024 * 1024), 'latin1').toString('latin1') },
      { name: '2 MB of source files', text: sources(2 * 1024 * 1024) },
    ];
    for (const c of cases) {
      const { result, report } = await StallSampler.during(() => countText(c.text));
      assert.ok(report.maxStallMs <= 200, `${c.name}: the event loop was busy for ${report.maxStallMs.toFixed(0)} ms`);
      assert.ok(report.peakGrowthBytes <= 32 * 1024 * 1024, `${c.name}: memory grew by ${mb(report.peakGrowthBytes)}`);
      // The exact count of a long word is quadratic to make: only the 64 KB one, and the text.
      if (c.text.length <= 64 * 1024 || c.name.includes('source')) {
        const truth = exact(c.text);
        assert.ok(result >= truth, `${c.name}: ${result} < ${truth}`);
        assert.ok(result <= truth * 1.5, `${c.name}: ${result} is far above ${truth}`);
      } else assert.ok(result >= c.text.length / 8, `${c.name}: ${result}`); // o200k's longest letters token
    }
  });
});

/** Ordinary text longer than the exact part: the repository's sources, one after another. */
function sources(chars: number): string {
  const files = execFileSync('git', ['ls-files', 'src'], { cwd: REPO, encoding: 'utf8' }).split('\n').filter(Boolean);
  let text = '';
  for (let i = 0; text.length < chars; i++) text += fs.readFileSync(path.join(REPO, files[i % files.length]!), 'utf8');
  return text.slice(0, chars);
}
