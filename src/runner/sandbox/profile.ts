// What a sandbox allows, as data: the caller's choices (SandboxPolicy), the folders it applies to
// (SandboxProfile), and the defaults — which workspace paths stay read-only inside, which home
// files are hidden, how many processes and how much memory a command gets. vscode-free.
import type { FileRules } from '../tools/fileRules';

export interface SandboxLimits {
  /** Processes (and threads) the command may have at once: a fork bomb stops here. */
  processes: number;
  /** Data memory per process (RLIMIT_DATA, bytes): heap and writable mappings, not reserved address space. */
  memoryBytes: number;
  /** Size of the private /tmp and of /dev/shm, each (bytes): they live in memory. */
  tmpBytes: number;
}

export interface SandboxPolicy {
  /** 'write': the workspace is writable except the read-only paths; 'read': all of it is read-only (an MCP server's default). */
  workspace: 'write' | 'read';
  /**
   * Hosts reachable through the sandbox's proxy: `example.com`, or `*.example.com` for its
   * subdomains. Empty: no network at all.
   */
  allowedDomains: readonly string[];
  /** Start the proxy even with no domain allowed, so the hosts a command wanted are reported (it reaches none). */
  reportDomains?: boolean;
  limits: SandboxLimits;
  /** More workspace patterns kept read-only (the protectedFiles syntax: `**` for any depth). */
  readOnly?: readonly string[];
  /** More absolute paths hidden from the command. */
  hidden?: readonly string[];
  /** Absolute paths under /tmp the command may read (the private /tmp hides the rest): the extension's own helpers when it is installed there. */
  readable?: readonly string[];
  /** Absolute paths outside the workspace the command may write (a package cache); each must exist. */
  writable?: readonly string[];
  /** Host environment variables passed in by name, besides the base ones (never a secret's). */
  envNames?: readonly string[];
}

/** A policy applied to one workspace. */
export interface SandboxProfile extends SandboxPolicy {
  workspaceRoot: string;
  /** The extension's storage folder (checkpoints): hidden. */
  storageDir?: string;
  /** The secret rules (protectedFiles.ts): matching workspace files are hidden. Absent: the defaults. */
  fileRules?: FileRules;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  processes: 512,
  memoryBytes: 8 * 1024 ** 3,
  tmpBytes: 1024 ** 3,
};

/** Commands: the workspace writable, no network. */
export const COMMAND_POLICY: SandboxPolicy = { workspace: 'write', allowedDomains: [], limits: DEFAULT_LIMITS };
/** stdio MCP servers: the workspace read-only, no network unless configured. */
export const MCP_SERVER_POLICY: SandboxPolicy = { workspace: 'read', allowedDomains: [], limits: DEFAULT_LIMITS };

/**
 * Workspace paths that make the host run something without anyone running a command — git's
 * hooks and configuration (VS Code runs git all the time), VS Code's workspace settings and tasks,
 * coding agents' hooks, CI, dev containers — read-only inside the sandbox. `guardMissing`: such a
 * path missing at the workspace root cannot be created either (layout.ts), because the host acts on
 * it as soon as it appears; the others only act when someone commits, pushes or reopens, and the
 * file journal shows them first.
 */
export const READ_ONLY_DEFAULTS: ReadonlyArray<{ patterns: string[]; why: string; guardMissing?: true }> = [
  {
    patterns: ['**/.git'],
    why: 'git runs its hooks and its configuration (core.fsmonitor, aliases) on the host',
    guardMissing: true,
  },
  { patterns: ['**/.vscode'], why: 'VS Code applies its settings and runs its tasks', guardMissing: true },
  {
    patterns: ['**/.claude/settings.json', '**/.claude/settings.local.json', '**/.github/hooks'],
    why: 'coding agents run their hooks',
    guardMissing: true,
  },
  { patterns: ['**/*.code-workspace'], why: 'VS Code applies its settings and runs its tasks' },
  { patterns: ['**/.github/agents', '**/.claude/agents'], why: 'coding agents follow their instructions' },
  {
    patterns: ['**/.github/workflows', '**/.gitlab-ci.yml', '**/.circleci', '**/azure-pipelines.yml'],
    why: 'CI runs them with its secrets',
  },
  { patterns: ['**/.husky', '**/.githooks', '**/.pre-commit-config.yaml'], why: 'git hook managers install them' },
  { patterns: ['**/.devcontainer', '**/.devcontainer.json'], why: 'a dev container runs their commands' },
];

/** Home files and folders that hold credentials: hidden (an empty folder or file in their place). */
export const HOME_SECRETS: readonly string[] = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.config/gh',
  '.config/hub',
  '.config/git/credentials',
  '.docker',
  '.kube',
  '.npmrc',
  '.yarnrc.yml',
  '.netrc',
  '.git-credentials',
  '.pypirc',
  '.pgpass',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.m2/settings.xml',
  '.gradle/gradle.properties',
  '.terraform.d/credentials.tfrc.json',
  '.vault-token',
  '.password-store',
  '.local/share/keyrings',
  // Editors' stored state: their secret storage, other extensions' tokens, this extension's runs.
  '.config/Code/User/globalStorage',
  '.config/Code/User/workspaceStorage',
  '.config/Code - Insiders/User/globalStorage',
  '.config/Code - Insiders/User/workspaceStorage',
  '.config/VSCodium/User/globalStorage',
  '.config/VSCodium/User/workspaceStorage',
  '.vscode-server/data/User',
  '.vscode-server-insiders/data/User',
  '.local/share/code-server/User',
];

/** Credential files named by environment variables: hidden where they point. */
export const SECRET_ENV_PATHS: readonly string[] = [
  'GNUPGHOME',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_CONFIG_FILE',
  'KUBECONFIG',
  'DOCKER_CONFIG',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'NPM_CONFIG_USERCONFIG',
];

/** Readable only by root, and root's sandbox is still uid 0: hidden when running as root. */
export const ROOT_SECRETS: readonly string[] = ['/etc/shadow', '/etc/gshadow', '/etc/sudoers', '/etc/ssh'];

/**
 * Under a fresh /proc, these still change the host for uid 0 even without capabilities (a
 * core_pattern runs a program as root on the next crash): read-only, as bubblewrap itself does
 * only when they look writable to it.
 */
export const PROC_READ_ONLY: readonly string[] = [
  '/proc/sys',
  '/proc/sysrq-trigger',
  '/proc/irq',
  '/proc/bus',
  '/proc/fs',
  '/proc/acpi',
  '/proc/scsi',
  '/proc/driver',
];

/** A domain on the allow list: a host name, or `*.` and a domain for its subdomains. */
export function domainAllowed(allowed: readonly string[], host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return allowed.some((a) => {
    const d = a.toLowerCase().replace(/\.$/, '');
    return d.startsWith('*.') ? h.endsWith(d.slice(1)) && h.length > d.length - 1 : h === d;
  });
}
