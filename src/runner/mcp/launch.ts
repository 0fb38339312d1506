// From a definition to what is started: `${input:id}` (the host prompts once and keeps the value in
// SecretStorage), `${env:NAME}` and the envFile are resolved only here, at start time, so no secret
// is ever part of a definition, an identity, a checkpoint or a log line.
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
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(ctx.env)) if (v !== undefined) env[k] = v;
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
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)?\s*$/.exec(line);
    if (!m) continue;
    let v = (m[2] ?? '').trim();
    if (/^"(.*)"$/.test(v)) v = v.slice(1, -1).replace(/\\n/g, '\n');
    else if (/^'(.*)'$/.test(v)) v = v.slice(1, -1);
    else v = v.replace(/\s+#.*$/, '');
    env[m[1]!] = v;
  }
  return env;
}
