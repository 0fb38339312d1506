#!/usr/bin/env node
// Packages the extension as a VSIX with @vscode/vsce (offline). vsce runs `vscode:prepublish`
// (the production esbuild build) first; .vscodeignore keeps the VSIX to the bundle, media,
// manifest, README and LICENSE. Prints the path and the files inside.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const { name, version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
export const vsixPath = path.join(root, 'dist', `${name}-${version}.vsix`);

const t0 = Date.now();
fs.mkdirSync(path.dirname(vsixPath), { recursive: true });
const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
execFileSync(
  process.execPath,
  [
    vsce,
    'package',
    '--no-dependencies',
    '--allow-missing-repository',
    '--no-rewrite-relative-links',
    '--out',
    vsixPath,
  ],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
const kb = (fs.statSync(vsixPath).size / 1024).toFixed(0);
console.log(`[package] ${path.relative(root, vsixPath)} (${kb} KB) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
