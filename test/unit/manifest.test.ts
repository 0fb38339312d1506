import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CommandIds } from '../../src/commands/ids';
import { ContextKeys, ContextValues } from '../../src/views/contextValues';

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

  it('targets VS Code ^1.95.0 (vscode.lm tool calling) with types no newer than that', () => {
    assert.equal(manifest.engines.vscode, '^1.95.0');
    assert.equal(manifest.devDependencies['@types/vscode'], '1.95.0');
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

  it('menus only name contributed commands, and `viewItem` clauses only our context values', () => {
    const known = new Set(contributed);
    const prefixes = [
      ContextValues.group,
      ContextValues.step,
      ContextValues.checkpoint,
      ContextValues.restore,
      ContextValues.loadMore,
      'run\\.',
      'run.',
      'thread\\.',
      'thread.',
      ContextValues.mcpSection,
      ContextValues.mcpRule,
      ContextValues.mcpTool(false),
      'mcpServer\\.',
    ];
    let checked = 0;
    for (const [menu, items] of Object.entries(
      manifest.contributes.menus as Record<string, { command: string; when?: string }[]>,
    )) {
      for (const item of items) {
        assert.ok(known.has(item.command), `${menu}: ${item.command} is contributed`);
        for (const m of (item.when ?? '').matchAll(/viewItem (?:==|=~) \/?\^?([A-Za-z.\\]+)/g)) {
          assert.ok(
            prefixes.some((p) => m[1]!.startsWith(p)),
            `${menu}: viewItem value ${m[1]} is one of ContextValues`,
          );
          checked += 1;
        }
      }
    }
    assert.ok(checked >= 8, `the viewItem clauses were found (${checked})`);
    assert.equal(ContextValues.run('completed', { resumable: false, approvals: false }), 'run.completed');
    assert.equal(
      ContextValues.thread('paused_error', { resumable: true, approvals: true }),
      'thread.paused_error.resumable.approvals',
    );
  });

  it('when clauses use only context keys the code sets (or VS Code built-ins)', () => {
    const ours = new Set(Object.values(ContextKeys));
    const text = JSON.stringify(manifest.contributes);
    for (const m of text.matchAll(/agentWaypoints\.(has[A-Za-z]+|restricted)\b/g)) {
      assert.ok(ours.has(m[0] as never), `${m[0]} is set by the extension (ContextKeys)`);
    }
  });

  it('contributes ordered, described settings under agentWaypoints.*', () => {
    const props = manifest.contributes.configuration[0].properties as Record<
      string,
      { order: number; markdownDescription: string }
    >;
    const orders = Object.values(props).map((p) => p.order);
    assert.equal(new Set(orders).size, orders.length, 'each setting has its own order');
    for (const [k, v] of Object.entries(props)) {
      assert.match(k, /^agentWaypoints\./);
      assert.ok(v.markdownDescription.length > 20, `${k} is described`);
    }
    assert.ok(
      // store.tls.keyFile names a PEM file on disk (pg reads it), not a secret held in settings.
      !Object.keys(props).some((k) => /key|secret|token/i.test(k) && !/maxTokens|tls\.keyFile$/.test(k)),
      'no setting holds a secret',
    );
  });

  it('limits itself in untrusted workspaces and restores approval panels after reload', () => {
    assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
    assert.ok(manifest.activationEvents.includes('onWebviewPanel:agentWaypoints.approvals'));
  });
});
