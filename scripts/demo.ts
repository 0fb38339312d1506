// `npm run demo`: packages the VSIX, installs it into code-server, opens demo/workspace
// (copied to a scratch folder so the repo stays clean), prints the URL and runs until Ctrl-C.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
// @ts-expect-error plain ESM script without types
import { installTools, toolsDir, toolsReady } from './tools.mjs';
import { installVsix, startCodeServer, writeUserSettings } from '../test/support/codeServer';
import { startModelServer } from '../test/fixtures/modelServer/server';
import { DEMO_MODEL_ID } from '../test/fixtures/modelServer/scenario';

const root = path.resolve(__dirname, '..');
const reset = process.argv.includes('--reset');
const port = Number(process.env.AW_DEMO_PORT ?? 8080);
const modelPort = Number(process.env.AW_DEMO_MODEL_PORT ?? 8787);

async function main(): Promise<void> {
  if (!toolsReady()) await installTools();
  execFileSync(process.execPath, [path.join(root, 'scripts/package.mjs')], { stdio: 'inherit' });
  const { name, version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

  const demoDir = path.join(toolsDir, 'demo');
  const workspace = path.join(demoDir, 'workspace');
  if (reset) fs.rmSync(demoDir, { recursive: true, force: true });
  if (!fs.existsSync(workspace)) fs.cpSync(path.join(root, 'demo/workspace'), workspace, { recursive: true });
  const extensionsDir = path.join(demoDir, 'extensions');
  await installVsix(path.join(root, 'dist', `${name}-${version}.vsix`), extensionsDir);
  // The offline demo model: a scripted OpenAI-compatible server on loopback (real HTTP), not an LLM.
  const model = await startModelServer({ scenario: 'demo', port: modelPort, chunkDelayMs: 15 });
  const userDataDir = path.join(demoDir, 'user-data');
  writeUserSettings(userDataDir, {
    'agentWaypoints.provider.baseUrl': model.url,
    'agentWaypoints.provider.model': DEMO_MODEL_ID,
  });

  const server = await startCodeServer({
    workspace,
    userDataDir,
    extensionsDir,
    logFile: path.join(demoDir, 'code-server.log'),
    port,
  });
  console.log(`
  Agent Waypoints demo is running (code-server 4.139.1 = VS Code 1.139.1, in your browser, offline).

    Open:       ${server.url()}
    Workspace:  ${workspace}   (npm run demo -- --reset starts it fresh)
    Model:      ${model.url}  — the OFFLINE DEMO MODEL: a scripted server that plays one
                coding task, whatever you type. No API key, no network.
    Log:        ${path.join(demoDir, 'code-server.log')}

  Try it: open the Agent Waypoints view (activity bar), click "Start agent run" and ask
  "Make slugify reject non-string input with a TypeError, and add a test". The run view opens:
  watch the answer stream, approve the edits and the test command in their cards, see a
  waypoint per step. When it is done, type a follow-up in the box at the bottom — e.g.
  "Also document it in the README" — and press Send: a second turn runs in the same thread.
  Reload the window (F1 → Developer: Reload Window) while an approval is waiting: it comes back.

  Press Ctrl-C to stop.
`);
  const stop = async () => {
    await server.stop();
    await model.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await new Promise(() => undefined);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
