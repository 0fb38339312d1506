// VS Code's `files.exclude` / `search.exclude` globs, turned into the gitignore-style globs both
// engines apply (ripgrep as `-g !GLOB`, the fallback through IgnoreRules with braces). VS Code
// matches these globs against the path from the workspace folder, so a glob that does not start
// with `**` or `/` is anchored there (`dist` hides ./dist, not src/dist) — as VS Code's own ripgrep
// search does.

/** VS Code's defaults for files.exclude and search.exclude: what a host without settings uses. */
export const DEFAULT_EXCLUDES: readonly string[] = [
  '**/.git',
  '**/.svn',
  '**/.hg',
  '**/CVS',
  '**/.DS_Store',
  '**/Thumbs.db',
  '**/node_modules',
  '**/bower_components',
  '**/*.code-search',
];

/** Never listed or searched, whatever the settings say: a repository's internals. */
const ALWAYS_EXCLUDED = '**/.git';

/**
 * The globs of a VS Code exclude setting object that are switched on. Entries with a `when`
 * clause (hide x.js when x.ts exists) depend on sibling files: they are left out, so such files
 * are listed rather than silently hidden.
 */
export function enabledExcludes(setting: unknown): string[] {
  if (!setting || typeof setting !== 'object') return [];
  return Object.entries(setting as Record<string, unknown>)
    .filter(([glob, on]) => on === true && glob.trim() !== '')
    .map(([glob]) => glob.trim());
}

/** VS Code globs → anchored gitignore-style globs, `.git` always included, duplicates dropped. */
export function toIgnoreGlobs(vscodeGlobs: readonly string[]): string[] {
  const out = new Set<string>([ALWAYS_EXCLUDED]);
  for (const raw of vscodeGlobs) {
    const g = raw.replace(/^\.\//, '');
    if (g === '') continue;
    out.add(g.startsWith('**') || g.startsWith('/') ? g : `/${g}`);
  }
  return [...out];
}
