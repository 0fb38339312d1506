// A child-process script for the crash and lock tests, bundled by esbuild (the extension's own
// bundler) so it starts fast: `node --import tsx` takes ~0.9 s per start on a 2-vCPU machine.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as esbuild from 'esbuild';

/** Bundles `entry` into `out` (default: child.cjs in a fresh temp folder); returns the CommonJS file to spawn. */
export async function bundleScript(
  entry: string,
  out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'aw-child-')), 'child.cjs'),
): Promise<string> {
  await esbuild.build({
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'error',
  });
  return out;
}
