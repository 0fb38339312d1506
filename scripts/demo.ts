// `npm run demo`: packages the VSIX, installs it into code-server, opens demo/workspace
// (copied to a scratch folder so the repo stays clean), prints the URL and runs until Ctrl-C.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
// @ts-expect-error plain ESM script without types
import { installTools, toolsDir, toolsReady } from './tools.mjs';
import { installVsix, startCodeServer, writeUserSettings } from '../test/support/codeServer';

const root = path.resolve(__dirname, '..');
const reset = process.argv.includes('--reset');
const port = Number(process.env.AW_DEMO_PORT ?? 8080);

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
  const userDataDir = path.join(demoDir, 'user-data');
  writeUserSettings(userDataDir);

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
    Log:        ${path.join(demoDir, 'code-server.log')}

  Press Ctrl-C to stop.
`);
  const stop = async () => {
    await server.stop();
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
