// Where a command runs is part of what the policy judges. git takes its repository from the folder
// it starts in, walking up: a folder inside `.git`, or one git takes for a repository of its own —
// a nested `.git` (a folder, or a file linking to a git folder elsewhere) or a folder that looks
// like a bare repository (HEAD, objects/, refs/) — brings that repository's configuration, which
// the workspace's files decide. A command there never runs without asking, allow list or not
// (policy.ts), and one the policy let through is refused there when it is about to run (runCommand.ts).
// The workspace's own repository (at its root, or above it) is not such a folder.
import { lstatSync, type Stats } from 'node:fs';
import path from 'node:path';
import type { FileTarget } from './protectedFiles';

/**
 * Why a command in `absCwd` (a real path) must not run without asking: it is inside `.git`, or in a
 * repository other than the workspace's own. null: neither, or not inside `realRoot` (confinement
 * refuses that).
 */
export function foreignRepository(realRoot: string, absCwd: string): string | null {
  const rel = path.relative(realRoot, absCwd);
  if (rel === '' || rel === '..' || rel.startsWith('..' + path.sep) || path.isAbsolute(rel)) return null;
  const parts = rel.split(path.sep);
  const shown = parts.join('/');
  // Case ignored: `.GIT` is `.git` on macOS and Windows (on Linux a false alarm only asks).
  if (parts.some((p) => p.toLowerCase() === '.git')) return `"${shown}" is inside a .git folder`;
  for (let i = parts.length; i > 0; i--) {
    const why = repositoryLook(path.join(realRoot, ...parts.slice(0, i)));
    if (!why) continue;
    const dir = parts.slice(0, i).join('/');
    return dir === shown ? `"${dir}" ${why}` : `"${shown}" is in "${dir}", which ${why}`;
  }
  return null;
}

/** How `dir` looks like a git repository to git, or null. */
function repositoryLook(dir: string): string | null {
  const dotGit = lstatOrNull(path.join(dir, '.git'));
  if (dotGit?.isFile()) return 'has a .git file (a link to a git repository elsewhere)';
  if (dotGit) return 'is a git repository of its own (it has .git)';
  const head = lstatOrNull(path.join(dir, 'HEAD'));
  const objects = lstatOrNull(path.join(dir, 'objects'));
  const refs = lstatOrNull(path.join(dir, 'refs'));
  if (head && !head.isDirectory() && objects?.isDirectory() && refs?.isDirectory())
    return 'looks like a bare git repository (HEAD, objects/, refs/)';
  return null;
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

/**
 * For the policy: why run_command's `cwd`, as the tools' resolver resolved it (protectedFiles.ts
 * fileTargets), asks — judged in every name the folder goes by — or null.
 */
export function cwdConcern(cwd: FileTarget | null): string | null {
  if (!cwd || 'refused' in cwd.resolved) return null; // a refused path is refused before anything asks
  const { abs, rel, names } = cwd.resolved;
  const realRoot = rel === '.' ? abs : path.resolve(abs, ...rel.split('/').map(() => '..'));
  for (const name of new Set([rel, ...names])) {
    const why = foreignRepository(realRoot, name === '.' ? realRoot : path.join(realRoot, ...name.split('/')));
    if (why) return why;
  }
  return null;
}
