// docs/architecture.md is where a newcomer starts: its layer diagram places every folder and root
// file of src/, so a new one cannot be added without a place on the map.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

describe('docs/architecture.md', () => {
  it('the layer diagram names every folder and root file of src/', () => {
    const doc = fs.readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
    const diagram = doc.slice(doc.indexOf('## The layers')).split('```')[1] ?? '';
    const entries = fs
      .readdirSync(path.join(root, 'src'), { withFileTypes: true })
      .map((e) => (e.isDirectory() ? `src/${e.name}/` : `src/${e.name}`));
    assert.ok(entries.length > 0);
    assert.deepEqual(
      entries.filter((e) => !diagram.includes(e)),
      [],
      'not on the layer diagram of docs/architecture.md',
    );
  });
});
