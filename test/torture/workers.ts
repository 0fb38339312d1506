// The soak of the workers' hand-off: test/unit/cli/workerTakeover.int.test.ts, run through mocha as the
// int tier runs it, with the number of SIGKILLs the soak asks for (`npm test` runs fewer).
import { spawn } from 'node:child_process';
import path from 'node:path';

/** The workers' takeover test with `kills` SIGKILLs, through mocha as the int tier runs it; true if it passed. */
export function workerTakeover(kills: number): Promise<boolean> {
  const root = path.resolve(__dirname, '../..');
  const mocha = path.join(root, 'node_modules', '.bin', 'mocha');
  const args = ['--node-option', 'import=tsx', '--extension', 'ts', '--require', 'test/support/rootHooks.ts'];
  args.push('--timeout', '30000', 'test/unit/cli/workerTakeover.int.test.ts');
  console.log(`\nworker takeover: ${kills} SIGKILLs`);
  const child = spawn(mocha, args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, AW_WORKER_TRIALS: String(kills) },
  });
  return new Promise((resolve) => {
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
}
