// Runs the in-host mocha suite (out/test/suite) inside a real VS Code extension host:
// code-server on a free loopback port, a throwaway user-data dir and workspace, headless
// Chromium opening the workbench with the extension-development payload. The suite writes
// its results to a file; this prints them and exits non-zero on failure or timeout.
// Always cleans up its processes.
import fs from 'node:fs';
import path from 'node:path';
import { launchChromium } from './support/browser';
import { makeTempDir, startCodeServer, writeUserSettings } from './support/codeServer';
import { printResults, type SuiteResults } from './support/results';

const root = path.resolve(__dirname, '..');
const TIMEOUT_MS = Number(process.env.AW_HOST_TIMEOUT_MS ?? 10 * 60_000);

async function main(): Promise<number> {
  const suiteIndex = path.join(root, 'out/test/suite/index.js');
  const bundle = path.join(root, 'dist/extension.js');
  for (const f of [suiteIndex, bundle]) {
    if (!fs.existsSync(f)) throw new Error(`${path.relative(root, f)} is missing: run npm run build first`);
  }
  const resultsDir = path.join(root, 'test-results');
  const resultsFile = path.join(resultsDir, 'host.json');
  fs.rmSync(resultsFile, { force: true });

  const tmp = makeTempDir('host');
  const workspace = path.join(tmp, 'workspace');
  fs.cpSync(path.join(root, 'test/fixtures/workspace'), workspace, { recursive: true });
  const userDataDir = path.join(tmp, 'user-data');
  writeUserSettings(userDataDir);

  const t0 = Date.now();
  const server = await startCodeServer({
    workspace,
    userDataDir,
    extensionsDir: path.join(tmp, 'extensions'),
    logFile: path.join(resultsDir, 'host-code-server.log'),
    env: { AW_RESULTS_FILE: resultsFile, ...(process.env.AW_GREP ? { AW_GREP: process.env.AW_GREP } : {}) },
  });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => process.env.AW_VERBOSE && console.error('[page]', e.message));
    await page.goto(
      server.url([
        ['extensionDevelopmentPath', server.remoteUri(root)],
        ['extensionTestsPath', server.remoteUri(suiteIndex)],
      ]),
    );
    const results = await waitForResults(resultsFile, TIMEOUT_MS);
    if (!results) {
      await page.screenshot({ path: path.join(resultsDir, 'host-timeout.png') }).catch(() => undefined);
      console.error(`[host] no results after ${TIMEOUT_MS / 1000} s; see test-results/host-code-server.log`);
      return 1;
    }
    printResults('in-host', results);
    console.log(`[host] done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return results.failed > 0 || results.passed === 0 ? 1 : 0;
  } finally {
    await browser.close().catch(() => undefined);
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function waitForResults(file: string, timeoutMs: number): Promise<SuiteResults | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (fs.existsSync(file)) {
      try {
        return JSON.parse(fs.readFileSync(file, 'utf8')) as SuiteResults;
      } catch {
        /* being written; read again */
      }
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return undefined;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`[host] ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  },
);
