// Property (issue 18, finding 1): random command lines made of allowed words, other programs and
// shell syntax never get `auto` unless running them — by dash, by bash and by the argv runner, with
// PATH = logging stubs — starts only allow-listed programs, each with exactly the judged argv.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { judge, DEFAULT_POLICY, loadShellGrammar, type ApprovalPolicy } from '../../../../src/runner/tools';
import { CORPUS_ALLOW, CORPUS_DENY } from './corpus';
import { makeStubs, runEverywhere, type Stubs } from './stubs';
import { trials } from '../../../support/trials';

const policy: ApprovalPolicy = {
  ...DEFAULT_POLICY,
  commandAllow: CORPUS_ALLOW,
  commandDeny: CORPUS_DENY,
  platform: 'linux',
};

const WORDS = [
  'npm',
  'test',
  'git',
  'status',
  'echo',
  'ls',
  'hello',
  '-l',
  'rm',
  'curl',
  'touch',
  'calc',
  'PWNED',
  'sh',
];
const SYNTAX = [
  ';',
  '&&',
  '||',
  '|',
  '&',
  '\n',
  '#',
  "#'",
  '#"',
  "'",
  '"',
  '$(',
  ')',
  '(',
  '`',
  "$'",
  '$"',
  '\\',
  '\\\n',
  '>',
  '>>',
  '<',
  '<<<',
  '<<',
  'EOF',
  '<(',
  '>(',
  '{',
  '}',
  '*',
  '?',
  '~',
  'X=1',
  '2>&1',
  '>/dev/null',
  '\r',
  '$X',
  '${X}',
  '!',
  '[',
  ']',
  '\t',
  '-c',
  '=',
  ',',
  '%',
  '^',
];
const token = fc.oneof(
  { arbitrary: fc.constantFrom(...WORDS), weight: 3 },
  { arbitrary: fc.constantFrom(...SYNTAX), weight: 2 },
);
const line = fc
  .tuple(fc.boolean(), fc.array(fc.tuple(token, fc.constantFrom(' ', '', ' ', ' ')), { minLength: 1, maxLength: 10 }))
  .map(([prefixed, parts]) => (prefixed ? 'npm test ' : '') + parts.map(([t, sep]) => t + sep).join(''));

describe('runner/tools command policy, property against real shells', function () {
  this.timeout(300_000);
  let stubs: Stubs;
  before(async () => {
    await loadShellGrammar();
    stubs = makeStubs();
  });
  after(() => stubs.dispose());

  it('a random line is auto only if what runs is exactly the allowed programs it shows', async () => {
    let approved = 0;
    await fc.assert(
      fc.asyncProperty(line, async (l) => {
        const d = judge({ toolName: 'run_command', category: 'command', args: { command: l } }, policy);
        if (d.verdict !== 'auto') return;
        approved++;
        await runEverywhere(l, stubs);
      }),
      { numRuns: trials(150, 'AW_PROPERTY_RUNS') },
    );
    assert.ok(approved >= 10, `only ${approved} random lines were auto-approved: the property tested too little`);
  });
});
