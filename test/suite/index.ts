// Entry point of the in-host suite. VS Code's extension host calls run() — the same contract
// under code-server (test/runInCodeServer.ts) and @vscode/test-electron (test/runInElectron.ts).
// Results go to a file because this process's console is the extension host's, not the harness's.
import fs from 'node:fs';
import path from 'node:path';
import Mocha from 'mocha';

export async function run(): Promise<void> {
  const resultsFile = process.env.AW_RESULTS_FILE ?? path.resolve(__dirname, '../../../test-results/host.json');
  const mocha = new Mocha({
    ui: 'bdd',
    timeout: 60_000,
    color: false,
    reporter: path.resolve(__dirname, '../../../test/support/reporter.cjs'),
    reporterOptions: { output: resultsFile },
  });
  // The harness runs two passes: trusted (everything else) and untrusted (the restricted-mode tests),
  // each narrowed by AW_GREP when set (one pattern: mocha keeps only the last grep and its invert).
  const pass = process.env.AW_PASS === 'restricted' ? '(?=.*restricted mode)' : '(?!.*restricted mode)';
  const only = process.env.AW_GREP ? `(?=.*(?:${process.env.AW_GREP}))` : '';
  mocha.grep(new RegExp(`^${pass}${only}`));
  for (const f of fs
    .readdirSync(__dirname)
    .filter((f) => f.endsWith('.test.js'))
    .sort()) {
    mocha.addFile(path.join(__dirname, f));
  }
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  if (failures > 0) throw new Error(`${failures} in-host test(s) failed`);
}
