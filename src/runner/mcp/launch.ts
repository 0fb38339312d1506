// From a definition to what is started: `${input:id}` (the host prompts once and keeps the value in
// SecretStorage), `${env:NAME}` and the envFile are resolved only here, at start time, so no secret
// is ever part of a definition, an identity, a checkpoint or a log line. A stdio server gets only the
// environment its definition names plus a minimal base (baseEnv): the host's API keys, tokens and
// AW_* variables never reach a server that did not ask for them by name.
import type { ServerDef } from './config';

export interface LaunchContext {
  /** The value of an input; rejects when the user dismissed the prompt (the server then fails, saying so). */
  input(id: string, server: string): Promise<string>;
  env: NodeJS.ProcessEnv;
  readFile(path: string): Promise<string>;
}

export type Launch =
  | { transport: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd: string | undefined }
  | { transport: 'http' | 'sse'; url: string; headers: Record<string, string> };

export async function resolveLaunch(def: ServerDef, ctx: LaunchContext): Promise<Launch> {
  const sub = (s: string) => substitute(s, def.name, ctx);
  if (def.transport !== 'stdio') {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(def.headers)) headers[k] = await sub(v);
    return { transport: def.transport, url: await sub(def.url), headers };
  }
  const fromFile = def.envFile ? parseEnvFile(await ctx.readFile(await sub(def.envFile))) : {};
  const env = baseEnv(ctx.env);
  Object.assign(env, fromFile);
  for (const [k, v] of Object.entries(def.env)) env[k] = await sub(v);
  const args: string[] = [];
  for (const a of def.args) args.push(await sub(a));
  return {
    transport: 'stdio',
    command: await sub(def.command),
    args,
    env,
    cwd: def.cwd ? await sub(def.cwd) : undefined,
  };
}

/** What every program needs to run at all: where programs are, who and where the user is, the locale, a temp folder. */
const BASE_POSIX = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR'];
const BASE_WINDOWS = [
  'PATH',
  'PATHEXT',
  'SYSTEMROOT',
  'SYSTEMDRIVE',
  'WINDIR',
  'COMSPEC',
  'TEMP',
  'TMP',
  'USERNAME',
  'USERPROFILE',
  'HOMEDRIVE',
  'HOMEPATH',
  'APPDATA',
  'LOCALAPPDATA',
  'PROGRAMDATA',
  'PROGRAMFILES',
  'PROGRAMFILES(X86)',
  'PROCESSOR_ARCHITECTURE',
  'NUMBER_OF_PROCESSORS',
];

/**
 * The minimal environment of a stdio server: the base names above and the locale's LC_* (names
 * compared without case on Windows, where the environment ignores it). Values that look like shell
 * functions are left out, as the MCP SDK does.
 */
export function baseEnv(host: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): Record<string, string> {
  const windows = platform === 'win32';
  const names = new Set(windows ? BASE_WINDOWS : BASE_POSIX);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(host)) {
    const name = windows ? k.toUpperCase() : k;
    if (v === undefined || v.startsWith('()')) continue;
    if (names.has(name) || (!windows && name.startsWith('LC_'))) env[k] = v;
  }
  return env;
}

/** The names of the inputs a definition refers to (prompted before it starts). */
export function inputsOf(def: ServerDef): string[] {
  const texts =
    def.transport === 'stdio'
      ? [def.command, ...def.args, ...Object.values(def.env), def.envFile ?? '', def.cwd ?? '']
      : [def.url, ...Object.values(def.headers)];
  const ids = new Set<string>();
  for (const t of texts) for (const m of t.matchAll(/\$\{input:([^}]+)\}/g)) ids.add(m[1]!);
  return [...ids];
}

async function substitute(s: string, server: string, ctx: LaunchContext): Promise<string> {
  const unknown = [...s.matchAll(/\$\{([^}]*)\}/g)].find((m) => !/^(input|env):/.test(m[1]!));
  if (unknown) throw new Error(`server "${server}": cannot resolve ${unknown[0]}`);
  let out = '';
  let last = 0;
  for (const m of s.matchAll(/\$\{(input|env):([^}]+)\}/g)) {
    out += s.slice(last, m.index);
    out += m[1] === 'env' ? (ctx.env[m[2]!] ?? '') : await ctx.input(m[2]!, server);
    last = m.index! + m[0].length;
  }
  return out + s.slice(last);
}

/** `KEY=value` lines (dotenv): comments, `export`, and single or double quotes. */
/**
 * The value before a ` # comment` (what `/\s+#.*$/` removes), found without a regular expression: that
 * one retries its whitespace run at every position, quadratic in a long run of spaces.
 */
function withoutComment(v: string): string {
  for (let i = v.indexOf('#'); i !== -1; i = v.indexOf('#', i + 1)) {
    if (i === 0 || !/\s/.test(v[i - 1]!)) continue;
    let start = i - 1;
    while (start > 0 && /\s/.test(v[start - 1]!)) start--;
    return v.slice(0, start);
  }
  return v;
}

export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)?\s*$/.exec(line);
    if (!m) continue;
    let v = (m[2] ?? '').trim();
    if (/^"(.*)"$/.test(v)) v = v.slice(1, -1).replace(/\\n/g, '\n');
    else if (/^'(.*)'$/.test(v)) v = v.slice(1, -1);
    else v = withoutComment(v);
    env[m[1]!] = v;
  }
  return env;
}
