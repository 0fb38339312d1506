import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CommandIds } from '../../src/commands/ids';

const root = path.resolve(__dirname, '../..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(dir, f));
}

describe('extension manifest', () => {
  const contributed: string[] = manifest.contributes.commands.map((c: { command: string }) => c.command);
  const ids = Object.values(CommandIds) as string[];

  it('contributes every command id the code knows, and no other', () => {
    assert.deepEqual([...contributed].sort(), [...ids].sort());
  });

  it('registers every contributed command somewhere in src/', () => {
    const src = sourceFiles(path.join(root, 'src'))
      .map((f) => fs.readFileSync(f, 'utf8'))
      .join('\n');
    const keys = Object.entries(CommandIds);
    for (const [key, id] of keys) {
      const registered = new RegExp(`registerCommand\\(\\s*CommandIds\\.${key}\\b`).test(src);
      assert.ok(registered, `${id} is contributed but never passed to registerCommand(CommandIds.${key}, …)`);
    }
  });

  it('gives every command a title, the category and an icon', () => {
    for (const c of manifest.contributes.commands) {
      assert.ok(c.title, `${c.command} has a title`);
      assert.equal(c.category, 'Agent Waypoints', `${c.command} category`);
      assert.match(c.icon ?? '', /^\$\([a-z-]+\)$/, `${c.command} has a codicon`);
    }
  });

  it('targets VS Code ^1.90.0 with types no newer than that', () => {
    assert.equal(manifest.engines.vscode, '^1.90.0');
    assert.equal(manifest.devDependencies['@types/vscode'], '1.90.0');
  });

  it('points views at a container and the welcome view at a view that exists', () => {
    const containers = manifest.contributes.viewsContainers.activitybar.map((c: { id: string }) => c.id);
    const views = Object.entries(manifest.contributes.views).flatMap(([container, vs]) => {
      assert.ok(containers.includes(container), `view container ${container} is declared`);
      return (vs as { id: string }[]).map((v) => v.id);
    });
    for (const w of manifest.contributes.viewsWelcome) assert.ok(views.includes(w.view), `welcome for ${w.view}`);
  });

  it('activates on startup finished, and its main is the esbuild bundle', () => {
    assert.ok(manifest.activationEvents.includes('onStartupFinished'));
    assert.equal(manifest.main, './dist/extension.js');
  });
});
