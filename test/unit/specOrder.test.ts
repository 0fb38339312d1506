// The tiers' file order (test/support/specOrder.cjs) only reorders: every file a tier names still
// exists (a renamed file would silently lose its place at the front), and each tier runs exactly the
// files its pattern finds, each once.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const root = path.resolve(__dirname, '../..');
const { specFiles, tiers } = createRequire(__filename)('../support/specOrder.cjs') as {
  specFiles(tier: string): string[];
  tiers: Record<string, { files(): string[]; slowestFirst: string[] }>;
};

describe('the tiers’ file order', () => {
  for (const [name, tier] of Object.entries(tiers)) {
    it(`${name}: every file named first exists and belongs to the tier; the tier runs each of its files once`, () => {
      const files = tier.files();
      assert.ok(files.length > 0);
      for (const f of tier.slowestFirst) {
        assert.ok(fs.existsSync(path.join(root, f)), `${f} is named in specOrder.cjs but does not exist`);
        assert.ok(files.includes(f), `${f} is not a file of the ${name} tier`);
      }
      const spec = specFiles(name);
      assert.deepEqual([...spec].sort(), files);
      assert.deepEqual(spec.slice(0, tier.slowestFirst.length), tier.slowestFirst);
    });
  }
});
