// Protected and secret-like files (issue 18, finding 4). A write to a file that makes something run
// (git hooks and config, VS Code tasks and settings, package scripts …) asks even when write tools
// run without asking; reading a file that may hold secrets asks even when reads do not, because its
// content goes to the model's provider. The defaults follow VS Code's own agent
// (`chat.tools.edits.autoApprove`, microsoft/vscode src/vs/platform/chat/common/chatSettings.ts);
// the README lists them. A user setting can add patterns, never remove them.
//
// Paths are judged as the tool's confinePath would resolve them AND as written, after lexical
// normalisation (`./.git/../.git/hooks/x`), with symlinks followed, case ignored (`.GIT/hooks` is
// `.git/hooks` on macOS and Windows; on Linux a false alarm only asks once more), and with what
// Windows ignores at the end of a name (`.git.`, `.git ::$DATA`) removed.
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { errorMessage } from '../../common/errors';
import { compileGlob, globMatches, pathSegments, type PathGlob } from './pathGlob';

export interface FileRule {
  glob: PathGlob;
  /** Why a write or read of such a file asks, completing "… is a protected file: <why>". */
  why: string;
}

export interface FileRules {
  /** Writes ask. */
  protect: readonly FileRule[];
  /** Reads ask (read_file), and search_text leaves them out. */
  secrets: readonly FileRule[];
  /** Secret-looking names that are templates without secrets (`.env.example`). */
  notSecret: readonly PathGlob[];
}

const RUNS_CODE = 'it can run code';
const rules = (why: string, ...patterns: string[]): FileRule[] => patterns.map((p) => ({ glob: compileGlob(p), why }));

/** The protected files, with why each asks. VS Code's defaults first, then ours. */
export const PROTECTED_DEFAULTS: ReadonlyArray<{ patterns: string[]; why: string }> = [
  { patterns: ['**/.git'], why: `${RUNS_CODE} (git hooks, and config such as core.fsmonitor that git status runs)` },
  { patterns: ['**/.vscode'], why: `${RUNS_CODE} (VS Code tasks that run on folder open, settings, launch configs)` },
  { patterns: ['**/*.code-workspace'], why: `${RUNS_CODE} (a VS Code workspace's settings and tasks)` },
  {
    patterns: [
      '**/.github/agents/**',
      '**/.github/hooks/**',
      '**/.claude/agents/**',
      '**/.claude/settings.json',
      '**/.claude/settings.local.json',
    ],
    why: `${RUNS_CODE} (coding agents' hooks and instructions)`,
  },
  {
    patterns: [
      '**/{package.json,server.xml,build.rs,web.config,.gitattributes,.env,Cargo.toml}',
      '**/{.npmrc,.yarnrc,.yarnrc.yml,.pnpmfile.js,.pnpmfile.cjs,.pnpmfile.mjs,pnpm-workspace.yaml}',
      '**/*.{csproj,fsproj,vbproj,vcxproj,proj,targets,props,gradle,gradle.kts}',
      '**/gradle.properties',
      '**/ruby_lsp/*/addon',
      '**/*.lock',
      '**/*-lock.{yaml,json}',
    ],
    why: `${RUNS_CODE} (build, package-manager or server configuration that runs scripts or loads settings)`,
  },
  {
    patterns: ['**/.husky', '**/.githooks', '**/.pre-commit-config.yaml', '**/{lefthook,.lefthook}.{yml,yaml}'],
    why: `${RUNS_CODE} (git hooks that hook managers install)`,
  },
  { patterns: ['**/.devcontainer'], why: `${RUNS_CODE} (commands a dev container runs when it is created)` },
];

const SECRETS_WHY = 'keys, tokens or passwords in it would go to the model provider';

/** Files that may hold secrets. */
export const SECRET_DEFAULTS: readonly string[] = [
  '**/.env',
  '**/.env.*',
  '**/{.npmrc,.yarnrc.yml,.pypirc,.netrc,_netrc,.git-credentials,.pgpass}',
  '**/.ssh',
  '**/.aws/credentials',
  '**/.docker/config.json',
  '**/id_{rsa,dsa,ecdsa,ed25519,ecdsa_sk,ed25519_sk}',
  '**/*.{pem,key,p12,pfx,jks,keystore,kdbx}',
  '**/*.tfstate',
];

/** Committed templates of `.env` files: examples, no secrets. */
export const NOT_SECRET_DEFAULTS: readonly string[] = ['**/.env.{example,sample,template,dist,defaults}'];

export const DEFAULT_FILE_RULES: FileRules = {
  protect: PROTECTED_DEFAULTS.flatMap((g) => rules(g.why, ...g.patterns)),
  secrets: rules(SECRETS_WHY, ...SECRET_DEFAULTS),
  notSecret: NOT_SECRET_DEFAULTS.map(compileGlob),
};

/** The defaults plus the user's patterns; patterns that do not compile are returned as problems, not applied. */
export function fileRules(extra: { protect?: readonly string[]; secrets?: readonly string[] }): {
  rules: FileRules;
  problems: string[];
} {
  const problems: string[] = [];
  const compile = (list: readonly string[] | undefined, why: string): FileRule[] =>
    (list ?? []).flatMap((p) => {
      if (typeof p !== 'string') return [];
      try {
        return [{ glob: compileGlob(p), why }];
      } catch (e) {
        problems.push(`${JSON.stringify(p.slice(0, 100))}: ${errorMessage(e)}`);
        return [];
      }
    });
  return {
    rules: {
      protect: [
        ...DEFAULT_FILE_RULES.protect,
        ...compile(extra.protect, 'it is on your agentWaypoints.approval.protectedFiles list'),
      ],
      secrets: [
        ...DEFAULT_FILE_RULES.secrets,
        ...compile(extra.secrets, 'it is on your agentWaypoints.approval.privateFiles list'),
      ],
      notSecret: DEFAULT_FILE_RULES.notSecret,
    },
    problems,
  };
}

/** A file a call writes or reads: the path as given, and the workspace-relative forms it is judged by. */
export interface FileTarget {
  path: string;
  rels: readonly string[];
}

export interface FileTargets {
  write: readonly FileTarget[];
  read: readonly FileTarget[];
}

/** Why a write to `rels` asks, or null. */
export function protectedWhy(rels: readonly string[], r: FileRules): { rel: string; why: string } | null {
  for (const rel of rels) {
    const segs = pathSegments(rel);
    const hit = r.protect.find((rule) => globMatches(rule.glob, segs));
    if (hit) return { rel, why: hit.why };
  }
  return null;
}

/** Why reading `rels` asks, or null. */
export function secretWhy(rels: readonly string[], r: FileRules): { rel: string; why: string } | null {
  for (const rel of rels) {
    const segs = pathSegments(rel);
    const hit = r.secrets.find((rule) => globMatches(rule.glob, segs));
    if (hit && !r.notSecret.some((g) => globMatches(g, segs))) return { rel, why: hit.why };
  }
  return null;
}

/** The approval reason for a call that writes a protected file or reads a secret-like one; null if it does neither. */
export function sensitiveFileReason(targets: FileTargets | undefined, r: FileRules): string | null {
  for (const t of targets?.write ?? []) {
    const hit = protectedWhy(t.rels, r);
    if (hit) return `${shown(t, hit.rel)} is a protected file: ${hit.why}. Writes to it always ask.`;
  }
  for (const t of targets?.read ?? []) {
    const hit = secretWhy(t.rels, r);
    if (hit) return `${shown(t, hit.rel)} may hold secrets: ${hit.why}. Reading it always asks.`;
  }
  return null;
}

/** "rel", or "path" (→ "rel") when the path as written looks different (a symlink, `..`, case). */
function shown(t: FileTarget, rel: string): string {
  return normalizeRel(t.path) === rel ? `"${rel}"` : `"${t.path}" (→ "${rel}")`;
}

/** The files a tool declares it writes (`files.paths`) and reads (`reads`), judged against `workspaceRoot`. */
export function fileTargets(
  tool: { files?: { kind: string; paths?: (args: never) => string[] }; reads?: (args: never) => string[] },
  args: unknown,
  workspaceRoot: string,
): FileTargets {
  const declared = (f: ((a: never) => string[]) | undefined): string[] => {
    try {
      return f ? f(args as never).filter((p) => typeof p === 'string') : [];
    } catch {
      return []; // arguments the tool itself will refuse
    }
  };
  const target = (p: string): FileTarget => ({ path: p, rels: judgedRels(workspaceRoot, p) });
  return {
    write: declared(tool.files?.kind === 'paths' ? tool.files.paths : undefined).map(target),
    read: declared(tool.reads).map(target),
  };
}

/**
 * The workspace-relative forms of `p`: lexically normalised, and with every symlink on the way
 * followed (what the file system will really touch). Synchronous (a few lstat calls) because the
 * approval policy is: it runs when a batch is planned. A symlink created later by a command of the
 * same batch is not seen — that command was approved, or runs without asking, and could have
 * written the file itself.
 */
export function judgedRels(workspaceRoot: string, p: string): string[] {
  const root = path.resolve(workspaceRoot);
  const lexical = path.resolve(root, p.replace(/\\/g, '/'));
  const out = new Set<string>();
  const lexRel = relUnder(root, lexical);
  out.add(normalizeRel(lexRel ?? p));
  const realRoot = realOr(root);
  const real = followLinks(lexical);
  const realRel = relUnder(realRoot, real) ?? relUnder(root, real);
  if (realRel !== null) out.add(normalizeRel(realRel));
  return [...out];
}

/** '/'-separated, no `.` segments, and without what Windows drops from a name's end (dots, spaces, `:stream`). */
export function normalizeRel(rel: string): string {
  return (
    rel
      .replace(/\\/g, '/')
      .split('/')
      .map((s) => (s === '..' ? s : windowsName(s)))
      .filter((s) => s !== '')
      .join('/') || '.'
  );
}

/** The name Windows opens for `s`: up to a `:` (an NTFS stream), without trailing dots and spaces. */
function windowsName(s: string): string {
  const colon = s.indexOf(':');
  let end = colon < 0 ? s.length : colon;
  while (end > 0 && (s[end - 1] === '.' || s[end - 1] === ' ')) end--; // a loop, not a regex: linear
  return s.slice(0, end);
}

function relUnder(root: string, abs: string): string | null {
  const rel = path.relative(root, abs);
  if (rel === '') return '.';
  if (rel === '..' || rel.startsWith('..' + path.sep) || path.isAbsolute(rel)) return null;
  return rel;
}

function realOr(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
}

/** `abs` with every existing symlink followed; the part that does not exist yet is kept as written. */
function followLinks(abs: string): string {
  const rest: string[] = [];
  let cur = abs;
  for (let hops = 0; hops < 40;) {
    try {
      return path.join(realpathSync.native(cur), ...rest);
    } catch {
      let link: string | null = null;
      try {
        if (lstatSync(cur).isSymbolicLink()) link = readlinkSync(cur);
      } catch {
        // missing: look at its parent
      }
      if (link !== null) {
        cur = path.resolve(path.dirname(cur), link); // a dangling link: where writing through it lands
        hops++;
        continue;
      }
      const parent = path.dirname(cur);
      if (parent === cur) break;
      rest.unshift(path.basename(cur));
      cur = parent;
    }
  }
  return abs;
}
