// The test language-model extension (test/fixtures/lmExtension) packaged as a VSIX, so the in-host
// and e2e harnesses install it into code-server next to Agent Waypoints (code-server's server loads
// only one extensionDevelopmentPath).
import fs from 'node:fs';
import path from 'node:path';
import { createVSIX } from '@vscode/vsce';
import { makeTempDir } from './codeServer';

const source = path.resolve(__dirname, '../fixtures/lmExtension');
let packaged: Promise<string> | undefined;

export function lmExtensionVsix(): Promise<string> {
  packaged ??= (async () => {
    const out = path.join(makeTempDir('lm-extension'), 'waypoints-test-lm.vsix');
    await createVSIX({
      cwd: source,
      packagePath: out,
      dependencies: false,
      allowMissingRepository: true,
      skipLicense: true,
    });
    if (!fs.existsSync(out)) throw new Error(`packaging ${source} produced no ${out}`);
    return out;
  })();
  return packaged;
}
