// Runs the in-host mocha suite (out/test/suite) inside a real VS Code extension host:
// code-server on a free loopback port, a throwaway user-data dir and workspace, headless
// Chromium opening the workbench with the extension-development payload. The suite writes
// its results to a file; this prints them and exits non-zero on failure or timeout.
// Two passes at once, each its own server and window: a trusted workspace (everything else) and an
// untrusted one (restricted mode); the restricted one is mostly a start, which the trusted one's
// tests overlap. Always cleans up its processes.
import fs from 'node:fs';
import path from 'node:path';
import { launchChromium } from './support/browser';
import {
  installVsix,
  makeTempDir,
  SKIPPED_BUILTINS,
  startCodeServer,
  UNCOMPRESSED,
  writeUserSettings,
} from './support/codeServer';
import { lmExtensionVsix } from './support/lmExtension';
import { printResults, type SuiteResults } from './support/results';

const root = path.resolve(__dirname, '..');
const resultsDir = path.join(root, 'test-results');
const TIMEOUT_MS = Number(process.env.AW_HOST_TIMEOUT_MS ?? 10 * 60_000);

interface Pass {
  name: 'trusted' | 'restricted';
  trust: boolean;
}

async function runPass(pass: Pass): Promise<SuiteResults> {
  const suiteIndex = path.join(root, 'out/test/suite/index.js');
  const resultsFile = path.join(resultsDir, `host-${pass.name}.json`);
  fs.rmSync(resultsFile, { force: true });
  const tmp = makeTempDir(`host-${pass.name}`);
  const workspace = path.join(tmp, 'workspace');
  fs.cpSync(path.join(root, 'test/fixtures/workspace'), workspace, { recursive: true });
  const userDataDir = path.join(tmp, 'user-data');
  writeUserSettings(
    userDataDir,
    pass.trust
      ? {}
      : {
          'security.workspace.trust.enabled': true,
          'security.workspace.trust.startupPrompt': 'never',
          'security.workspace.trust.emptyWindow': false,
        },
  );

  const t0 = Date.now();
  // A LanguageModelChatProvider backed by the scripted server, for the vscode.lm tests.
  await installVsix(await lmExtensionVsix(), path.join(tmp, 'extensions'));
  const server = await startCodeServer({
    workspace,
    userDataDir,
    extensionsDir: path.join(tmp, 'extensions'),
    logFile: path.join(resultsDir, `host-${pass.name}-code-server.log`),
    workspaceTrust: !pass.trust,
    developmentOptions: true,
    skipBuiltinExtensions: SKIPPED_BUILTINS,
    env: {
      AW_RESULTS_FILE: resultsFile,
      AW_PASS: pass.name,
      ...(process.env.AW_GREP ? { AW_GREP: process.env.AW_GREP } : {}),
    },
  });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ extraHTTPHeaders: UNCOMPRESSED });
    await page.goto(
      server.url([
        ['extensionDevelopmentPath', server.remoteUri(root)],
        ['extensionTestsPath', server.remoteUri(suiteIndex)],
      ]),
    );
    const results = await waitForResults(resultsFile, TIMEOUT_MS);
    if (!results) {
      await page.screenshot({ path: path.join(resultsDir, `host-${pass.name}-timeout.png`) }).catch(() => undefined);
      throw new Error(
        `${pass.name} pass: no results after ${TIMEOUT_MS / 1000} s; see test-results/host-${pass.name}-code-server.log`,
      );
    }
    console.log(`[host] ${pass.name} pass in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return results;
  } finally {
    await browser.close().catch(() => undefined);
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  for (const f of ['out/test/suite/index.js', 'dist/extension.js']) {
    if (!fs.existsSync(path.join(root, f))) throw new Error(`${f} is missing: run npm run build first`);
  }
  const passes: Pass[] = [
    { name: 'trusted', trust: true },
    { name: 'restricted', trust: false },
  ];
  const outcomes = await Promise.allSettled(passes.map(runPass));
  const merged: SuiteResults = { passed: 0, failed: 0, pending: 0, tests: [] };
  outcomes.forEach((o, i) => {
    if (o.status === 'rejected') throw o.reason;
    const r = o.value;
    merged.passed += r.passed;
    merged.failed += r.failed;
    merged.pending += r.pending;
    merged.tests.push(...r.tests.map((t) => ({ ...t, title: `[${passes[i]!.name}] ${t.title}` })));
  });
  printResults('in-host', merged);
  const out = process.env.AW_RESULTS_FILE ?? path.join(resultsDir, 'host.json');
  fs.writeFileSync(out, JSON.stringify(merged, null, 2));
  return merged.failed > 0 || merged.passed === 0 ? 1 : 0;
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
