// bubblewrap's command line and environment as pure functions of the profile, the workspace's
// layout and the host: what each mount does depends on its place (a later mount covers an earlier
// one), so the tests read positions, not just presence.
import assert from 'node:assert/strict';
import { bwrapArgs, PROXY_URL, sandboxEnv, secretCandidates, type HostView } from '../../../src/runner/sandbox/args';
import type { WorkspaceLayout } from '../../../src/runner/sandbox/layout';
import {
  COMMAND_POLICY,
  MCP_SERVER_POLICY,
  ROOT_SECRETS,
  type SandboxProfile,
} from '../../../src/runner/sandbox/profile';

const WS = '/w/project';
const EMPTY = { dir: '/e/dir', file: '/e/file' };

function host(over: Partial<HostView> = {}): HostView {
  return {
    home: '/home/u',
    root: false,
    otherHomes: [],
    env: {},
    kinds: new Map([
      ['/home/u/.ssh', 'dir'],
      ['/home/u/.npmrc', 'file'],
    ]),
    empty: EMPTY,
    prlimit: '/usr/bin/prlimit',
    shellProcessesOption: null,
    ...over,
  };
}

function layout(over: Partial<WorkspaceLayout> = {}): WorkspaceLayout {
  return { readOnly: [], pinned: [], placeholders: [], hidden: [], hiddenTargets: [], frozen: [], ...over };
}

const profile = (over: Partial<SandboxProfile> = {}): SandboxProfile => ({
  ...COMMAND_POLICY,
  workspaceRoot: WS,
  ...over,
});
const cmd = { argv: ['/bin/sh', '-c', 'npm test'], cwd: `${WS}/pkg`, seccompFd: 4, statusFd: 5 };

/** The index of the mount `op src dst`, or -1. */
function mountAt(a: string[], op: string, src: string, dst = src): number {
  for (let i = 0; i + 2 < a.length; i++) if (a[i] === op && a[i + 1] === src && a[i + 2] === dst) return i;
  return -1;
}

describe('sandbox arguments (args.ts)', () => {
  it('mounts the root read-only first, then fresh /dev, /proc, /tmp, then the workspace writable', () => {
    const a = bwrapArgs(profile(), layout(), host(), cmd);
    assert.deepEqual(a.slice(0, 3), ['--ro-bind', '/', '/']);
    const dev = a.indexOf('--dev');
    const proc = a.indexOf('--proc');
    const tmp = mountAt(a, '--size', String(COMMAND_POLICY.limits.tmpBytes), '--tmpfs');
    const ws = mountAt(a, '--bind', WS);
    assert.ok(dev > 0 && proc > dev && ws > proc && tmp > 0 && tmp < ws, a.join(' '));
    // /dev/shm and /tmp both get a size: they live in memory.
    assert.equal(a.filter((x) => x === '--size').length, 2);
    assert.ok(mountAt(a, '--ro-bind-try', '/proc/sys') > proc, '/proc/sys is read-only over the fresh /proc');
  });

  it("an MCP server's policy binds the workspace read-only", () => {
    const a = bwrapArgs(profile({ workspace: MCP_SERVER_POLICY.workspace }), layout(), host(), cmd);
    assert.ok(mountAt(a, '--ro-bind', WS) > 0);
    assert.equal(mountAt(a, '--bind', WS), -1);
  });

  it('pins parents, then binds protected paths read-only, then masks placeholders and secrets — in that order', () => {
    const l = layout({
      pinned: [{ rel: 'sub', kind: 'dir' }],
      readOnly: [
        { rel: '.git', kind: 'dir' },
        { rel: 'sub/.git', kind: 'dir' },
      ],
      frozen: ['lib'],
      placeholders: ['.vscode'],
      hidden: [{ rel: '.env', kind: 'file' }],
      hiddenTargets: [{ abs: '/etc/secret-target', kind: 'file' }],
    });
    const a = bwrapArgs(profile(), l, host(), cmd);
    const ws = mountAt(a, '--bind', WS);
    const pin = mountAt(a, '--bind', `${WS}/sub`);
    const frozen = mountAt(a, '--ro-bind', `${WS}/lib`);
    const git = mountAt(a, '--ro-bind', `${WS}/.git`);
    const subGit = mountAt(a, '--ro-bind', `${WS}/sub/.git`);
    const placeholder = mountAt(a, '--ro-bind', EMPTY.dir, `${WS}/.vscode`);
    const env = mountAt(a, '--ro-bind', EMPTY.file, `${WS}/.env`);
    const target = mountAt(a, '--ro-bind', EMPTY.file, '/etc/secret-target');
    for (const [name, i] of Object.entries({ pin, frozen, git, subGit, placeholder, env, target }))
      assert.ok(i > 0, name);
    assert.ok(ws < pin && pin < git && pin < subGit, 'a pinned parent must not cover the read-only bind below it');
    assert.ok(git < placeholder && subGit < env && env < target);
  });

  it("hides the home's credentials that exist, as a folder or a file, after every other mount", () => {
    const a = bwrapArgs(profile({ storageDir: '/home/u/.config/Code/User/globalStorage/aw' }), layout(), host(), cmd);
    const ssh = mountAt(a, '--ro-bind', EMPTY.dir, '/home/u/.ssh');
    const npmrc = mountAt(a, '--ro-bind', EMPTY.file, '/home/u/.npmrc');
    assert.ok(ssh > mountAt(a, '--bind', WS) && npmrc > 0);
    assert.equal(
      mountAt(a, '--ro-bind', EMPTY.dir, '/home/u/.aws'),
      -1,
      'a missing one needs no mask (the root is read-only)',
    );
    assert.ok(secretCandidates(profile({ storageDir: '/s/aw' }), host()).includes('/s/aw'));
  });

  it("as root: hides other users' credentials and root-only files too", () => {
    const h = host({ root: true, otherHomes: ['/home/bob'] });
    const c = secretCandidates(profile(), h);
    assert.ok(c.includes('/home/bob/.ssh') && c.includes('/home/bob/.aws'));
    for (const p of ROOT_SECRETS) assert.ok(c.includes(p), p);
    assert.ok(!secretCandidates(profile(), host()).includes('/etc/shadow'));
  });

  it('hides credential files that variables point to', () => {
    const c = secretCandidates(
      profile(),
      host({ env: { KUBECONFIG: '/opt/k/config', AWS_SHARED_CREDENTIALS_FILE: 'relative' } }),
    );
    assert.ok(c.includes('/opt/k/config'));
    assert.ok(!c.some((p) => p.endsWith('relative')));
  });

  it('unshares every namespace, drops every capability, dies with its parent, loads the filter, bounds processes and memory', () => {
    const a = bwrapArgs(profile(), layout(), host(), cmd);
    const sep = a.indexOf('--');
    const opts = a.slice(0, sep);
    for (const o of [
      '--unshare-user',
      '--unshare-ipc',
      '--unshare-pid',
      '--unshare-net',
      '--unshare-uts',
      '--unshare-cgroup-try',
      '--die-with-parent',
      '--new-session',
      '--disable-userns',
    ])
      assert.ok(opts.includes(o), o);
    assert.ok(!opts.includes('--share-net'));
    assert.deepEqual(opts.slice(opts.indexOf('--cap-drop'), opts.indexOf('--cap-drop') + 2), ['--cap-drop', 'ALL']);
    assert.deepEqual(opts.slice(opts.indexOf('--seccomp'), opts.indexOf('--seccomp') + 2), ['--seccomp', '4']);
    assert.deepEqual(opts.slice(opts.indexOf('--chdir'), opts.indexOf('--chdir') + 2), ['--chdir', `${WS}/pkg`]);
    const l = COMMAND_POLICY.limits;
    assert.deepEqual(a.slice(sep + 1), [
      '/bin/sh',
      '-c',
      'printf started >&5 && exec 5>&- && exec "$@"',
      'sandbox',
      '/usr/bin/prlimit',
      `--nproc=${l.processes}:${l.processes}`,
      `--data=${l.memoryBytes}:${l.memoryBytes}`,
      '--',
      '/bin/sh',
      '-c',
      'npm test',
    ]);
  });

  it("where /bin/sh's ulimit is known, the status shell sets the limits itself: no prlimit starts", () => {
    const l = COMMAND_POLICY.limits;
    for (const [option, kib] of [
      ['-p', l.memoryBytes / 1024],
      ['-u', 1],
    ] as const) {
      const limits = option === '-u' ? { ...l, memoryBytes: 2047 } : l;
      const a = bwrapArgs(profile({ limits }), layout(), host({ shellProcessesOption: option }), cmd);
      assert.deepEqual(a.slice(a.indexOf('--') + 1), [
        '/bin/sh',
        '-c',
        `ulimit ${option} ${l.processes} && ulimit -d ${kib} && printf started >&5 && exec 5>&- && exec "$@"`,
        'sandbox',
        '/bin/sh',
        '-c',
        'npm test',
      ]);
    }
    // Without the status pipe (a server): prlimit, as for any other shell.
    const server = bwrapArgs(profile(), layout(), host({ shellProcessesOption: '-p' }), {
      ...cmd,
      statusFd: undefined,
    });
    assert.equal(server[server.indexOf('--') + 1], '/usr/bin/prlimit');
  });

  it('with network, the helper alone starts before the command: it gets the status pipe, the limits and the calls', () => {
    const network = { perl: '/usr/bin/perl', helper: '/x/netHelper.pl', calls: [302, 41, 49, 50, 46] };
    const a = bwrapArgs(profile(), layout(), host(), { ...cmd, network });
    const l = COMMAND_POLICY.limits;
    assert.deepEqual(a.slice(a.indexOf('--') + 1), [
      '/usr/bin/perl',
      '/x/netHelper.pl',
      '5',
      String(l.processes),
      String(l.memoryBytes),
      '302',
      '41',
      '49',
      '50',
      '46',
      '3128',
      '/bin/sh',
      '-c',
      'npm test',
    ]);
    assert.throws(() => bwrapArgs(profile(), layout(), host(), { ...cmd, statusFd: undefined, network }));
  });

  it("the command's words come after every option: a word like --bind is the command's, not bubblewrap's", () => {
    const a = bwrapArgs(profile(), layout(), host(), { ...cmd, argv: ['--bind', '/', '/'] });
    assert.deepEqual(a.slice(-4), ['--', '--bind', '/', '/']);
  });
});

describe('sandbox environment (args.ts sandboxEnv)', () => {
  const hostEnv = {
    PATH: '/usr/bin',
    HOME: '/home/u',
    LANG: 'C.UTF-8',
    OPENAI_API_KEY: 'sk-secret',
    ANTHROPIC_API_KEY: 'sk-ant',
    GITHUB_TOKEN: 'ghp',
    AWS_SECRET_ACCESS_KEY: 'aws',
    SSH_AUTH_SOCK: '/tmp/ssh-agent.sock',
    VSCODE_GIT_IPC_HANDLE: '/run/user/1000/vscode-git.sock',
    JAVA_HOME: '/opt/jdk',
    MY_TOOL_DIR: '/opt/tool',
    MY_TOOL_TOKEN: 'tok',
  };

  it('starts from the base names: no API key, token, agent socket or editor handle', () => {
    const env = sandboxEnv(hostEnv, profile());
    assert.equal(env.PATH, '/usr/bin');
    assert.equal(env.JAVA_HOME, '/opt/jdk');
    for (const k of [
      'OPENAI_API_KEY',
      'ANTHROPIC_API_KEY',
      'GITHUB_TOKEN',
      'AWS_SECRET_ACCESS_KEY',
      'SSH_AUTH_SOCK',
      'VSCODE_GIT_IPC_HANDLE',
      'MY_TOOL_DIR',
    ])
      assert.equal(env[k], undefined, k);
    assert.ok(!Object.values(env).some((v) => v.startsWith('sk-')));
  });

  it('passes the names a policy asks for, except secret-looking ones', () => {
    const env = sandboxEnv(hostEnv, profile({ envNames: ['MY_TOOL_DIR', 'MY_TOOL_TOKEN', 'OPENAI_API_KEY'] }));
    assert.equal(env.MY_TOOL_DIR, '/opt/tool');
    assert.equal(env.MY_TOOL_TOKEN, undefined);
    assert.equal(env.OPENAI_API_KEY, undefined);
  });

  it('points the proxy variables at the in-sandbox listener only when domains are allowed', () => {
    assert.equal(sandboxEnv(hostEnv, profile()).HTTPS_PROXY, undefined);
    const env = sandboxEnv(hostEnv, profile({ allowedDomains: ['registry.npmjs.org'] }));
    for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) assert.equal(env[k], PROXY_URL);
  });

  it("keeps caches in the private /tmp and adds the caller's variables last", () => {
    const env = sandboxEnv(hostEnv, profile(), { AW_EFFECT: 'k' });
    assert.equal(env.TMPDIR, '/tmp');
    assert.equal(env.AW_EFFECT, 'k');
  });
});
