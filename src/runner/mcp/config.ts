// MCP server definitions in VS Code's own format (`.vscode/mcp.json`, and the same shape in a user
// setting): `servers` by name with `type`, `command`/`args`/`env`/`envFile`/`cwd` or `url`/`headers`,
// and `inputs` whose values (`${input:id}`) are prompted once and kept in SecretStorage by the host.
// A file that does not parse is an error, never "no servers". (jsonc-parser's ESM build: its UMD main
// loads modules at run time, which a bundle cannot follow.)
import { promises as fs } from 'node:fs';
import { createScanner, parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser/lib/esm/main.js';
import { z } from 'zod';
import { MAX_JSON_DEPTH } from '../../common/jsonBounds';
import { canonicalJson, sha256 } from '../hash';
import { closeFile, NotRegularFile, openRegular, readWhole, TooLarge } from '../tools/regularFile';

const StringMap = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]));

export const McpServerConfig = z.looseObject({
  type: z.enum(['stdio', 'http', 'sse']).optional(),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  env: StringMap.optional(),
  envFile: z.string().optional(),
  cwd: z.string().optional(),
  url: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).optional(),
});
export type McpServerConfig = z.infer<typeof McpServerConfig>;

export const McpInputConfig = z.looseObject({
  type: z.string(),
  id: z.string().min(1),
  description: z.string().optional(),
  password: z.boolean().optional(),
  default: z.string().optional(),
});
export type McpInputConfig = z.infer<typeof McpInputConfig>;

export const McpConfigFile = z.looseObject({
  servers: z.record(z.string(), z.unknown()).optional(),
  inputs: z.array(z.unknown()).optional(),
});

/** Where a definition came from: the workspace's `.vscode/mcp.json` or the user's settings. */
export type ServerSource = 'workspace' | 'user';

interface DefBase {
  name: string;
  source: ServerSource;
  /** sha256 over what makes this server this server (see serverIdentity). */
  identity: string;
}
export type StdioServerDef = DefBase & {
  transport: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  envFile: string | null;
  cwd: string | null;
};
export type HttpServerDef = DefBase & { transport: 'http' | 'sse'; url: string; headers: Record<string, string> };
export type ServerDef = StdioServerDef | HttpServerDef;

export interface ParsedConfig {
  servers: ServerDef[];
  inputs: McpInputConfig[];
  /** What could not be read, each naming the file (and server): shown with the servers, never silent. */
  errors: string[];
}

export interface ConfigContext {
  source: ServerSource;
  /** For messages: `.vscode/mcp.json`, `settings (agentWaypoints.mcp.servers)`. */
  label: string;
  /** `${workspaceFolder}`; null: no folder. */
  workspaceFolder: string | null;
  userHome: string;
}

/** mcp.json and an envFile are read up to this size: real ones are a few kilobytes. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * The text of a configuration file the workspace controls (`.vscode/mcp.json`, an envFile): a
 * regular file of at most MAX_CONFIG_BYTES, opened without blocking. Anything else is an Error that
 * says why (a missing file keeps its ENOENT).
 */
export async function readConfigFile(abs: string): Promise<string> {
  let file;
  try {
    file = await openRegular(await fs.realpath(abs)); // a link is followed, as VS Code does
  } catch (e) {
    if (e instanceof NotRegularFile) throw new Error(`${e.message}; not read`);
    throw e;
  }
  try {
    if (file.st.size > MAX_CONFIG_BYTES) throw new TooLarge(MAX_CONFIG_BYTES);
    return (await readWhole(file, MAX_CONFIG_BYTES)).toString('utf8');
  } catch (e) {
    if (e instanceof TooLarge) throw new Error(`is larger than ${MAX_CONFIG_BYTES} bytes; not read`);
    throw e;
  } finally {
    await closeFile(file);
  }
}

/** Parses mcp.json text (JSON with comments and trailing commas, as VS Code allows). */
export function parseMcpJson(text: string, ctx: ConfigContext): ParsedConfig {
  // The parser recurses once per level: a file nested 100,000 deep would overflow the stack.
  if (depthOver(text, MAX_JSON_DEPTH))
    return { servers: [], inputs: [], errors: [`${ctx.label}: nests more than ${MAX_JSON_DEPTH} levels deep`] };
  const errors: ParseError[] = [];
  const value: unknown = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0]!;
    const { line, column } = position(text, e.offset);
    return {
      servers: [],
      inputs: [],
      errors: [`${ctx.label}: ${printParseErrorCode(e.error)} at line ${line}, column ${column}`],
    };
  }
  if (value === undefined) return { servers: [], inputs: [], errors: [] }; // an empty file
  return readConfig(value, ctx);
}

/** Reads a parsed `{ servers, inputs }` object (the file's, or the user setting's). */
export function readConfig(value: unknown, ctx: ConfigContext): ParsedConfig {
  const file = McpConfigFile.safeParse(value);
  if (!file.success) return { servers: [], inputs: [], errors: [`${ctx.label}: ${issues(file.error)}`] };
  const errors: string[] = [];
  const inputs: McpInputConfig[] = [];
  for (const raw of file.data.inputs ?? []) {
    const i = McpInputConfig.safeParse(raw);
    if (i.success) inputs.push(i.data);
    else errors.push(`${ctx.label}: an input is not valid: ${issues(i.error)}`);
  }
  const servers: ServerDef[] = [];
  for (const [name, raw] of Object.entries(file.data.servers ?? {})) {
    const s = McpServerConfig.safeParse(raw);
    if (!s.success) {
      errors.push(`${ctx.label}: server "${name}": ${issues(s.error)}`);
      continue;
    }
    const def = toDef(name, s.data, ctx);
    if (typeof def === 'string') errors.push(`${ctx.label}: server "${name}": ${def}`);
    else servers.push(def);
  }
  return { servers, inputs, errors };
}

function toDef(name: string, c: McpServerConfig, ctx: ConfigContext): ServerDef | string {
  const type = c.type ?? (c.command ? 'stdio' : c.url ? 'http' : undefined);
  if (!type) return 'needs a "command" (stdio) or a "url" (http)';
  const fixed = (s: string) => substituteFixed(s, ctx);
  if (type === 'stdio') {
    if (!c.command) return '"type": "stdio" needs a "command"';
    const env = Object.fromEntries(Object.entries(c.env ?? {}).map(([k, v]) => [k, v === null ? '' : String(v)]));
    const def: Omit<StdioServerDef, 'identity'> = {
      name,
      source: ctx.source,
      transport: 'stdio',
      command: fixed(c.command),
      args: (c.args ?? []).map(fixed),
      env,
      envFile: c.envFile ? fixed(c.envFile) : null,
      cwd: c.cwd ? fixed(c.cwd) : ctx.workspaceFolder,
    };
    return { ...def, identity: serverIdentity(def) };
  }
  if (!c.url) return `"type": "${type}" needs a "url"`;
  const url = fixed(c.url);
  if (!/^https?:\/\//i.test(url) && !/\$\{/.test(url)) return `"url" must be http(s): ${url}`;
  const def: Omit<HttpServerDef, 'identity'> = {
    name,
    source: ctx.source,
    transport: type,
    url,
    headers: c.headers ?? {},
  };
  return { ...def, identity: serverIdentity(def) };
}

/**
 * What an approval is bound to: the program, its arguments and the *names* of its environment
 * (values may be secrets and may change without changing the server), or the URL. `${input:…}` and
 * `${env:…}` stay as written: the identity never holds a secret.
 */
export function serverIdentity(def: Omit<StdioServerDef, 'identity'> | Omit<HttpServerDef, 'identity'>): string {
  const what =
    def.transport === 'stdio'
      ? {
          transport: 'stdio',
          command: def.command,
          args: def.args,
          env: Object.keys(def.env).sort(),
          envFile: def.envFile,
          cwd: def.cwd,
        }
      : { transport: def.transport, url: def.url };
  return sha256(canonicalJson(what));
}

/** `${workspaceFolder}`, `${userHome}`, `${pathSeparator}`: known when the file is read. */
function substituteFixed(s: string, ctx: ConfigContext): string {
  return s.replace(/\$\{(workspaceFolder|userHome|pathSeparator|\/)\}/g, (m, v: string) => {
    if (v === 'workspaceFolder') return ctx.workspaceFolder ?? m;
    if (v === 'userHome') return ctx.userHome;
    return process.platform === 'win32' ? '\\' : '/';
  });
}

/** Whether objects and arrays nest deeper than `limit`, by the parser's own scanner (comments and strings skipped). */
function depthOver(text: string, limit: number): boolean {
  const scanner = createScanner(text, true);
  let depth = 0;
  for (let t = scanner.scan(); t !== 17 /* EOF */; t = scanner.scan()) {
    if (t === 1 /* { */ || t === 3 /* [ */) {
      if (++depth > limit) return true;
    } else if (t === 2 /* } */ || t === 4 /* ] */) depth--;
  }
  return false;
}

function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: (before[before.length - 1]?.length ?? 0) + 1 };
}

function issues(e: z.ZodError): string {
  return e.issues.map((i) => `${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`).join('; ');
}
