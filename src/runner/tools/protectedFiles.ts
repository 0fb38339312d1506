// Protected and secret-like files. A write to a file that makes something run
// (git hooks and config, VS Code tasks and settings, package scripts …) asks even when write tools
// run without asking; reading a file that may hold secrets asks even when reads do not, because its
// content goes to the model's provider. The defaults follow VS Code's own agent
// (`chat.tools.edits.autoApprove`, microsoft/vscode src/vs/platform/chat/common/chatSettings.ts);
// the README lists them. A user setting can add patterns, never remove them.
//
// A path is judged as the tool will touch it: resolved once by the tools' own resolver (paths.ts),
// by every workspace name it goes by on the way (as written, and after each symlink) — the tool
// then holds to that resolution or refuses. A spelling that another system reads as another file
// is judged in every reading: case is ignored (`.GIT/hooks` is `.git/hooks` on macOS and Windows;
// on Linux a false alarm only asks once more), and what Windows ignores at the end of a name
// (`.git.`, `.git ::$DATA`) is judged removed too. (A backslash is refused by the resolver.) A
// regular file with other names (hard links) may be a secret file under another name: reading it asks.
import { errorMessage } from '../../common/errors';
import type { FileRule, FileRules } from './fileRules';
import { Glob, type GlobPath } from './glob';
import { type ConfinedPath, isLinked, judgement, type JudgedPaths, resolvePathSync } from './paths';

export type { FileRule, FileRules } from './fileRules';

/** A longer pattern from the settings is refused. */
export const MAX_PATTERN_LENGTH = 512;

const RUNS_CODE = 'it can run code';
const rules = (why: string, ...patterns: string[]): FileRule[] => patterns.map((p) => ({ glob: fileGlob(p), why }));

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
  notSecret: NOT_SECRET_DEFAULTS.map(fileGlob),
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
        return [{ glob: fileGlob(p), why }];
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

/**
 * A pattern of the file lists, read as VS Code's file settings are: one without `/` matches a name
 * in any folder (`*.pem`), one with `/` from the workspace root (`**` to match at any depth); a
 * folder's match covers its content; case is ignored. `\` is a separator, never an escape (a path
 * typed on Windows), and a leading `./` or `/` and a trailing `/` say nothing. Throws on a pattern
 * that is too long, empty, or has more than 64 alternatives (each is matched on every path).
 */
export function fileGlob(pattern: string): Glob {
  if (pattern.length > MAX_PATTERN_LENGTH)
    throw new Error(`the pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  let p = pattern.trim().replace(/\\/g, '/').replace(/\/+/g, '/');
  while (p.startsWith('./') || p.startsWith('/')) p = p.slice(p.startsWith('/') ? 1 : 2);
  if (p.endsWith('/')) p = p.slice(0, -1);
  if (p === '') throw new Error('the pattern is empty');
  return Glob.compile(p, { braces: true, anyDepth: true, coversContent: true, ignoreCase: true, maxAlternatives: 64 });
}

/** A workspace-relative path as the file lists match it (null for the workspace itself). */
function filePath(rel: string): GlobPath | null {
  const names = rel.split('/').filter(Boolean);
  return names.length > 0 ? Glob.path(names.join('/'), { ignoreCase: true }) : null;
}

/** A path a call writes, reads or works in: as given, and the resolver's answer (or why it refused the path). */
export interface FileTarget {
  path: string;
  resolved: ConfinedPath | { refused: string };
}

export interface FileTargets {
  write: readonly FileTarget[];
  read: readonly FileTarget[];
  /** A command's working folder. */
  cwd: FileTarget | null;
}

/** Why a write to a file by these names asks, or null. */
export function protectedWhy(names: readonly string[], r: FileRules): { rel: string; why: string } | null {
  for (const rel of readings(names)) {
    const segs = filePath(rel);
    const hit = segs && r.protect.find((rule) => rule.glob.test(segs));
    if (hit) return { rel, why: hit.why };
  }
  return null;
}

/** Why reading a file by these names asks, or null. */
export function secretWhy(names: readonly string[], r: FileRules): { rel: string; why: string } | null {
  for (const rel of readings(names)) {
    const segs = filePath(rel);
    const hit = segs && r.secrets.find((rule) => rule.glob.test(segs));
    if (hit && !r.notSecret.some((g) => g.test(segs!))) return { rel, why: hit.why };
  }
  return null;
}

/** The path refused by the resolver, with why, or null: such a call is refused before it runs. */
export function refusedTarget(targets: FileTargets | undefined): string | null {
  const all = [...(targets?.write ?? []), ...(targets?.read ?? []), ...(targets?.cwd ? [targets.cwd] : [])];
  for (const t of all) if ('refused' in t.resolved) return t.resolved.refused;
  return null;
}

/** The approval reason for a call that writes a protected file or reads a secret-like one; null if it does neither. */
export function sensitiveFileReason(targets: FileTargets | undefined, r: FileRules): string | null {
  for (const t of targets?.write ?? []) {
    if ('refused' in t.resolved) continue;
    const hit = protectedWhy(t.resolved.names, r);
    if (hit) return `${shown(t, hit.rel)} is a protected file: ${hit.why}. Writes to it always ask.`;
  }
  for (const t of targets?.read ?? []) {
    if ('refused' in t.resolved) continue;
    const hit = secretWhy(t.resolved.names, r);
    if (hit) return `${shown(t, hit.rel)} may hold secrets: ${hit.why}. Reading it always asks.`;
  }
  for (const t of targets?.read ?? []) {
    if ('refused' in t.resolved || !isLinked(t.resolved)) continue;
    return (
      `${shown(t, t.resolved.rel)} has ${t.resolved.nlink} names (hard links): another of them may be a file outside ` +
      'the workspace or one that holds secrets, and its content would go to the model provider. Reading it always asks.'
    );
  }
  return null;
}

/** "rel", or "path" (→ "rel") when the path as written is another name (a symlink, `..`, case). */
function shown(t: FileTarget, rel: string): string {
  return t.path === rel ? `"${rel}"` : `"${t.path}" (→ "${rel}")`;
}

type Declared = { files?: { kind: string; paths?: (args: never) => string[] }; reads?: (args: never) => string[] };

/**
 * The files a tool declares it writes (`files.paths`) and reads (`reads`), and a command's `cwd`,
 * resolved against `workspaceRoot` by the tools' own resolver — synchronously (a few lstat calls),
 * because the approval policy is: it runs when a batch is planned.
 */
export function fileTargets(tool: Declared & { cwd?: (args: never) => string }, args: unknown, workspaceRoot: string) {
  const declared = (f: ((a: never) => string[] | string) | undefined): string[] => {
    try {
      return f ? [f(args as never)].flat().filter((p) => typeof p === 'string') : [];
    } catch {
      return []; // arguments the tool itself will refuse
    }
  };
  const target = (p: string): FileTarget => ({ path: p, resolved: resolveOrRefusal(workspaceRoot, p) });
  const targets: FileTargets = {
    write: declared(tool.files?.kind === 'paths' ? tool.files.paths : undefined).map(target),
    read: declared(tool.reads).map(target),
    cwd: declared(tool.cwd).map(target)[0] ?? null,
  };
  return targets;
}

function resolveOrRefusal(workspaceRoot: string, p: string): FileTarget['resolved'] {
  try {
    return resolvePathSync(workspaceRoot, p);
  } catch (e) {
    return { refused: errorMessage(e) };
  }
}

/** What the call runs on, by path as given: the tool refuses a path that no longer resolves to it (paths.ts). */
export function judgedPaths(targets: FileTargets): JudgedPaths {
  const all = [...targets.write, ...targets.read, ...(targets.cwd ? [targets.cwd] : [])];
  return new Map(all.map((t) => [t.path, judgement(t.resolved)]));
}

/** A name and, when Windows would open another name for it, that one too. */
function readings(names: readonly string[]): string[] {
  const out = new Set<string>();
  for (const n of names) {
    out.add(n);
    out.add(windowsReading(n));
  }
  return [...out];
}

/** '/'-separated, without what Windows drops from a name's end (dots, spaces, `:stream`). */
export function windowsReading(rel: string): string {
  return (
    rel
      .split('/')
      .map(windowsName)
      .filter((s) => s !== '')
      .join('/') || '.'
  );
}

/** The name Windows opens for `s`: up to a `:` (an NTFS stream), without trailing dots and spaces. */
function windowsName(s: string): string {
  if (s === '.' || s === '..') return s;
  const colon = s.indexOf(':');
  let end = colon < 0 ? s.length : colon;
  while (end > 0 && (s[end - 1] === '.' || s[end - 1] === ' ')) end--; // a loop, not a regex: linear
  return s.slice(0, end);
}
