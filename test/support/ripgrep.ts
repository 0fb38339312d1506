// The ripgrep binary the unit tests run: the one inside code-server's VS Code in the tools cache —
// the same binary, found by the same code (src/ripgrepPath.ts), as in the extension host. `npm test`
// installs the tools before the unit suite; a missing binary fails the tests that need it, loudly.
import { findRipgrep } from '../../src/ripgrepPath';
// @ts-expect-error plain ESM script without types
import * as tools from '../../scripts/tools.mjs';

export const vscodeAppRoot: string = tools.vscodeAppRoot;

export function ripgrepForTests(): string {
  const rg = findRipgrep(vscodeAppRoot);
  if (rg === null) {
    throw new Error(
      `no ripgrep binary under ${vscodeAppRoot} (code-server's VS Code): run \`npm run tools\` to install the test tools`,
    );
  }
  return rg;
}
