// Finds the ripgrep binary VS Code ships under `vscode.env.appRoot`. Where it sits has changed over
// the years (and differs between a desktop build, whose node_modules are in an asar archive with
// binaries unpacked beside it, and a server/code-server build): try each known place. vscode-free,
// so the unit tests run it against the real code-server install.
import fs from 'node:fs';
import path from 'node:path';

export interface Platform {
  platform: NodeJS.Platform;
  arch: string;
}

const HERE: Platform = { platform: process.platform, arch: process.arch };

/** Where VS Code versions keep rg, relative to appRoot, most recent layout first. */
export function ripgrepCandidates(appRoot: string, p: Platform = HERE): string[] {
  const exe = p.platform === 'win32' ? 'rg.exe' : 'rg';
  const places = [
    `@vscode/ripgrep-universal/bin/${p.platform}-${p.arch}`, // VS Code ≥ 1.13x: one package with every platform's binary
    '@vscode/ripgrep/bin',
    'vscode-ripgrep/bin', // before 2021
  ];
  return ['node_modules', 'node_modules.asar.unpacked'].flatMap((nm) =>
    places.map((pl) => path.join(appRoot, nm, ...pl.split('/'), exe)),
  );
}

/** The first candidate that is an executable file, or null. */
export function findRipgrep(appRoot: string | undefined, p: Platform = HERE): string | null {
  if (!appRoot) return null;
  for (const c of ripgrepCandidates(appRoot, p)) {
    try {
      const st = fs.statSync(c);
      if (!st.isFile()) continue;
      if (p.platform !== 'win32') fs.accessSync(c, fs.constants.X_OK);
      return c;
    } catch {
      // not here
    }
  }
  return null;
}
