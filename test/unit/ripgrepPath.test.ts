// Finding VS Code's ripgrep: in the real code-server install (the binary the extension host uses),
// and in each layout VS Code builds have used.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findRipgrep, ripgrepCandidates } from '../../src/ripgrepPath';
import { vscodeAppRoot } from '../support/ripgrep';

describe('ripgrepPath', () => {
  let appRoot: string;
  beforeEach(() => (appRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-approot-'))));
  afterEach(() => fs.rmSync(appRoot, { recursive: true, force: true }));

  const place = (rel: string, mode = 0o755): string => {
    const p = path.join(appRoot, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, '#!/bin/sh\n', { mode });
    return p;
  };

  it("finds the ripgrep inside code-server's VS Code, and it runs", () => {
    const rg = findRipgrep(vscodeAppRoot);
    assert.ok(rg, `ripgrep under ${vscodeAppRoot}`);
    assert.match(execFileSync(rg, ['--version'], { encoding: 'utf8' }), /^ripgrep \d+\./);
  });

  it('each known layout, newest first; only executable files count', () => {
    assert.equal(findRipgrep(appRoot, { platform: 'linux', arch: 'x64' }), null);
    const legacy = place('node_modules.asar.unpacked/vscode-ripgrep/bin/rg');
    assert.equal(findRipgrep(appRoot, { platform: 'linux', arch: 'x64' }), legacy);
    const desktop = place('node_modules.asar.unpacked/@vscode/ripgrep/bin/rg');
    assert.equal(findRipgrep(appRoot, { platform: 'linux', arch: 'x64' }), desktop);
    const server = place('node_modules/@vscode/ripgrep/bin/rg');
    assert.equal(findRipgrep(appRoot, { platform: 'linux', arch: 'x64' }), server);
    place('node_modules/@vscode/ripgrep-universal/bin/linux-x64/rg', 0o644);
    assert.equal(findRipgrep(appRoot, { platform: 'linux', arch: 'x64' }), server, 'not executable: skipped');
    const universal = place('node_modules/@vscode/ripgrep-universal/bin/linux-arm64/rg');
    assert.equal(findRipgrep(appRoot, { platform: 'linux', arch: 'arm64' }), universal);
    assert.equal(findRipgrep(undefined), null);
  });

  it('Windows names the binary rg.exe', () => {
    assert.ok(ripgrepCandidates('C:\\vscode', { platform: 'win32', arch: 'x64' }).every((c) => c.endsWith('rg.exe')));
  });
});
