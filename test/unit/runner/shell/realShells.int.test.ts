// The command policy against real shells (issue 18, finding 1): every line of the corpus is put to
// the policy; every line it auto-approves is then run for real by dash (`sh -c`), by bash, and by
// run_command's argv runner, with PATH = logging stub programs. Only allow-listed programs may run,
// each with exactly the argv the policy judged, and nothing may appear in the folder it ran in.
import assert from 'node:assert/strict';
import { judge, DEFAULT_POLICY, loadShellGrammar, type ApprovalPolicy } from '../../../../src/runner/tools';
import { CORPUS, CORPUS_ALLOW, CORPUS_DENY } from './corpus';
import { makeStubs, runEverywhere, type Stubs } from './stubs';

const policy: ApprovalPolicy = {
  ...DEFAULT_POLICY,
  commandAllow: CORPUS_ALLOW,
  commandDeny: CORPUS_DENY,
  platform: 'linux',
};
const judgeLine = (line: string) =>
  judge({ toolName: 'run_command', category: 'command', args: { command: line } }, policy);

describe('runner/tools command policy against real shells', function () {
  this.timeout(120_000);
  let stubs: Stubs;
  before(async () => {
    await loadShellGrammar();
    stubs = makeStubs();
  });
  after(() => stubs.dispose());

  it('has a corpus of at least 60 lines covering every construct', () => {
    assert.ok(CORPUS.length >= 60, `${CORPUS.length} lines`);
    assert.equal(new Set(CORPUS.map(([l]) => l)).size, CORPUS.length, 'no line twice');
  });

  it('each corpus line gets its decision, with a reason that says what was seen', () => {
    const wrong = CORPUS.map(([line, want]) => ({ line, want, got: judgeLine(line) })).filter(
      (r) => r.got.verdict !== r.want,
    );
    assert.deepEqual(wrong, []);
    for (const [line, want] of CORPUS) {
      if (want === 'ask') assert.doesNotMatch(judgeLine(line).reason, /tools ask for approval/, line);
    }
  });

  it('every auto-approved line runs only allow-listed programs with the judged argv: dash, bash, argv runner', async () => {
    const approved = CORPUS.filter(([line]) => judgeLine(line).verdict === 'auto').map(([line]) => line);
    assert.ok(approved.length >= 20, `${approved.length} approved lines`);
    for (const line of approved) await runEverywhere(line, stubs);
  });
});
