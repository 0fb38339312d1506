// The same in-host suite under @vscode/test-electron, for machines that can download VS Code.
// (On this project's CI machines they cannot; there the suite runs in code-server: test/runInCodeServer.ts.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runTests } from '@vscode/test-electron';

async function main(): Promise<void> {
  const root = path.resolve(__dirname, '..');
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-electron-'));
  fs.cpSync(path.join(root, 'test/fixtures/workspace'), workspace, { recursive: true });
  try {
    await runTests({
      extensionDevelopmentPath: root,
      extensionTestsPath: path.join(root, 'out/test/suite/index.js'),
      launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust'],
      extensionTestsEnv: { AW_RESULTS_FILE: path.join(root, 'test-results/host-electron.json') },
    });
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
