#!/usr/bin/env node
// esbuild for every bundle the project ships or tests:
//   dist/extension.js        the extension (CommonJS, `vscode` external)
//   dist/cli.js              the headless runner, `agent-waypoints` (CommonJS, with a shebang)
//   dist/*.wasm, dist/*.cjs  the bash grammar and the argv runner (with the modules it requires)
//                            run_command loads at run time
//   media/dist/*.js|css      webview scripts for the browser + codicons
//   out/test/suite/*.js      the in-host mocha suite (runs inside VS Code's extension host)
// --production minifies and drops source maps from the extension bundle (the webview bundles are
// always minified); --watch rebuilds.
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const root = path.resolve(import.meta.dirname, '..');

/** @type {esbuild.Plugin} */
const problemMatcher = {
  name: 'problem-matcher',
  setup(build) {
    build.onEnd((result) => {
      for (const { text, location } of result.errors) {
        console.error(`✘ [ERROR] ${text}`);
        if (location) console.error(`    ${location.file}:${location.line}:${location.column}`);
      }
    });
  },
};

function listFiles(dir, suffix) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(suffix))
    .map((f) => path.join(dir, f));
}

/** @type {esbuild.BuildOptions[]} */
const builds = [
  {
    entryPoints: [path.join(root, 'src/extension.ts')],
    outfile: path.join(root, 'dist/extension.js'),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    external: ['vscode'],
    sourcemap: !production,
    minify: production,
    sourcesContent: false,
    logLevel: 'warning',
    plugins: [problemMatcher],
  },
  {
    // The headless runner (`agent-waypoints`, package.json "bin"): vscode-free, beside the extension
    // so it finds the same grammar and runner files in dist/.
    entryPoints: [path.join(root, 'src/cli/bin.ts')],
    outfile: path.join(root, 'dist/cli.js'),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    sourcemap: !production,
    minify: production,
    sourcesContent: false,
    logLevel: 'warning',
    plugins: [problemMatcher],
  },
  {
    // A compaction's worker thread (src/store/disk/snapshotOffThread.ts starts it from beside itself).
    entryPoints: [path.join(root, 'src/store/disk/snapshotWorker.ts')],
    outfile: path.join(root, 'dist/snapshotWorker.js'),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: !production,
    minify: production,
    sourcesContent: false,
    logLevel: 'warning',
    plugins: [problemMatcher],
  },
  {
    // One bundle per top-level script (media/src/*.ts); its modules live in folders beside it.
    entryPoints: fs
      .readdirSync(path.join(root, 'media/src'))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
      .map((f) => path.join(root, 'media/src', f)),
    outdir: path.join(root, 'media/dist'),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    sourcemap: !production,
    // Always minified: the page loads and parses what ships (half the bytes), in tests and the bench too.
    minify: true,
    logLevel: 'warning',
    plugins: [problemMatcher],
  },
  {
    entryPoints: [path.join(root, 'test/suite/index.ts'), ...listFiles(path.join(root, 'test/suite'), '.test.ts')],
    outdir: path.join(root, 'out/test/suite'),
    outbase: path.join(root, 'test/suite'),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    external: ['vscode', 'mocha'],
    sourcemap: 'inline',
    logLevel: 'warning',
    plugins: [problemMatcher],
  },
];

function copyCodicons() {
  const from = path.join(root, 'node_modules/@vscode/codicons/dist');
  const to = path.join(root, 'media/dist');
  fs.mkdirSync(to, { recursive: true });
  for (const f of ['codicon.css', 'codicon.ttf']) fs.copyFileSync(path.join(from, f), path.join(to, f));
}

/** Files the extension bundle loads beside itself at run time (shell/grammar.ts, shell/launch.ts, sandbox/launch.ts). */
function copyShellAssets() {
  const to = path.join(root, 'dist');
  fs.mkdirSync(to, { recursive: true });
  const wasm = path.join(root, 'node_modules/@vscode/tree-sitter-wasm/wasm');
  for (const f of ['tree-sitter.wasm', 'tree-sitter-bash.wasm']) fs.copyFileSync(path.join(wasm, f), path.join(to, f));
  for (const f of ['argvRunner.cjs', 'programs.cjs', 'gitHardening.cjs'])
    fs.copyFileSync(path.join(root, 'src/runner/tools/shell', f), path.join(to, f));
  fs.copyFileSync(path.join(root, 'src/runner/sandbox/netHelper.pl'), path.join(to, 'netHelper.pl'));
}

const active = builds.filter((b) => Array.isArray(b.entryPoints) && b.entryPoints.length > 0);
if (watch) {
  copyCodicons();
  copyShellAssets();
  for (const b of active) await (await esbuild.context(b)).watch();
  console.log('[build] watching…');
} else {
  const t0 = Date.now();
  fs.rmSync(path.join(root, 'out/test/suite'), { recursive: true, force: true });
  fs.rmSync(path.join(root, 'media/dist'), { recursive: true, force: true });
  if (production)
    for (const f of ['dist/extension.js.map', 'dist/cli.js.map']) fs.rmSync(path.join(root, f), { force: true });
  await Promise.all(active.map((b) => esbuild.build(b)));
  copyCodicons();
  copyShellAssets();
  fs.chmodSync(path.join(root, 'dist/cli.js'), 0o755);
  console.log(`[build] ${active.length} bundles${production ? ' (production)' : ''} in ${Date.now() - t0} ms`);
}
