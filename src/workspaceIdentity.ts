// Which project a workspace is, independent of where it is checked out: the shared run store keys
// runs by it, so a run started in one checkout is listed, resumed and restored in another (another
// machine, a rebuilt container). The git remote URL (credentials and protocol stripped, so the same
// repository cloned over https or ssh is the same project) plus the folder's path inside the
// repository; or a name the user chooses (agentWaypoints.store.workspaceName). vscode-free.
import { execFile } from 'node:child_process';
import { findGit } from './runner/fileJournal/git';
import { gitEnv } from './runner/tools/shell/gitHardening.cjs';

export interface WorkspaceIdentity {
  /** The key runs are stored under. */
  id: string;
  /** For messages: "github.com/acme/api (packages/server)". */
  label: string;
  how: 'git' | 'name' | 'none';
}

export async function workspaceIdentity(root: string, chosenName?: string): Promise<WorkspaceIdentity> {
  const name = chosenName?.trim();
  if (name) return { id: `name:${name}`, label: name, how: 'name' };
  const remote = await firstRemoteUrl(root);
  if (!remote) return { id: '', label: '', how: 'none' };
  const repo = normalizeRemote(remote);
  const sub = ((await git(root, ['rev-parse', '--show-prefix'])) ?? '').replace(/\/+$/, '');
  return { id: `git:${repo}${sub ? `#${sub}` : ''}`, label: sub ? `${repo} (${sub})` : repo, how: 'git' };
}

/** origin's URL, else the first remote's. */
async function firstRemoteUrl(root: string): Promise<string | undefined> {
  const remotes = ((await git(root, ['remote'])) ?? '').split('\n').filter(Boolean);
  const pick = remotes.includes('origin') ? 'origin' : remotes[0];
  return pick ? git(root, ['remote', 'get-url', pick]) : undefined;
}

/**
 * git from PATH outside the workspace (findGit), with the repository's config not trusted to run
 * anything (gitHardening.cjs: core.fsmonitor off, no hooks, no implicit bare repository): the
 * workspace may be hostile.
 */
function git(cwd: string, args: string[]): Promise<string | undefined> {
  const exe = findGit({ env: process.env, workspaceRoot: cwd });
  if (!exe) return Promise.resolve(undefined);
  const opts = { timeout: 5_000, env: gitEnv(process.env), windowsHide: true };
  return new Promise((resolve) => {
    execFile(exe, ['-C', cwd, ...args], opts, (err, stdout) => resolve(err ? undefined : stdout.trim()));
  });
}

/**
 * host/path of a remote URL, lowercase host, no credentials, no scheme, no `.git`:
 * `git@github.com:Acme/api.git`, `https://user:token@github.com/Acme/api`, `ssh://git@github.com/Acme/api.git`
 * → `github.com/Acme/api`. A local path stays a path (a bare repository on a shared disk).
 */
export function normalizeRemote(url: string): string {
  const u = url.trim();
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/)(.+)$/.exec(u); // git@host:owner/repo
  let host: string;
  let path: string;
  if (scp && !/^[a-z]+:\/\//i.test(u)) [host, path] = [scp[1]!, scp[2]!];
  else {
    try {
      const p = new URL(u);
      if (p.protocol === 'file:') return stripGit(decodeURIComponent(p.pathname));
      host = p.hostname + (p.port && !['22', '80', '443'].includes(p.port) ? `:${p.port}` : '');
      path = decodeURIComponent(p.pathname);
    } catch {
      return stripGit(u);
    }
  }
  return `${host.toLowerCase()}/${stripGit(path.replace(/^\/+/, ''))}`;
}

const stripGit = (p: string) => p.replace(/\/+$/, '').replace(/\.git$/, '');
