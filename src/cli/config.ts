// The command line's settings: the user's config file (`agent-waypoints.json` in the user's Agent
// Waypoints folder, or --config) and a few environment variables. The keys are the extension's
// settings without the `agentWaypoints.` prefix (nested or dotted), with the same defaults and
// allowed values: both are read from the package's own settings table, so they cannot drift. Never
// read from the workspace: a repository must not loosen the approvals or redirect the API key.
import fs from 'node:fs';
import path from 'node:path';
import { contributes } from '../../package.json';
import { agentHome } from '../storageDir';

const PREFIX = 'agentWaypoints.';
/** VS Code's own settings the extension reads too, with VS Code's defaults (what the file journal and the search skip). */
const FOREIGN: Record<string, unknown> = {
  'files.exclude': on(['**/.git', '**/.svn', '**/.hg', '**/CVS', '**/.DS_Store', '**/Thumbs.db']),
  'search.exclude': on(['**/node_modules', '**/bower_components', '**/*.code-search']),
};
const SECRET_KEY = /(api[-_.]?key|password|secret|token|connectionString)/i;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

interface Declared {
  default: unknown;
  enum?: readonly unknown[];
}

const declared: ReadonlyMap<string, Declared> = new Map(
  (contributes.configuration as { properties: Record<string, Declared> }[])
    .flatMap((c) => Object.entries(c.properties))
    .filter(([k]) => k.startsWith(PREFIX))
    .map(([k, v]) => [k.slice(PREFIX.length), v]),
);

/** The settings in effect: the file's values over the package's defaults. */
export class CliConfig {
  private constructor(
    private readonly values: ReadonlyMap<string, unknown>,
    /** The file read, if any (for messages). */
    readonly file: string | null,
  ) {}

  /** Reads `file` (must exist), else the default file when there is one. */
  static load(file: string | undefined, env: NodeJS.ProcessEnv = process.env): CliConfig {
    const chosen = file ? path.resolve(file) : defaultConfigFile(env);
    if (!chosen) return new CliConfig(new Map(), null);
    let text: string;
    try {
      text = fs.readFileSync(chosen, 'utf8');
    } catch (err) {
      if (!file && (err as NodeJS.ErrnoException).code === 'ENOENT') return new CliConfig(new Map(), null);
      throw new ConfigError(`cannot read the config file ${chosen}: ${(err as Error).message}`);
    }
    return CliConfig.parse(text, chosen);
  }

  static parse(text: string, file: string | null): CliConfig {
    const where = file ?? 'the config';
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new ConfigError(`${where} is not JSON: ${(err as Error).message}`);
    }
    if (!isObject(json)) throw new ConfigError(`${where} must hold a JSON object`);
    const values = new Map<string, unknown>();
    for (const [key, value] of flatten(json)) {
      const k = key.startsWith(PREFIX) ? key.slice(PREFIX.length) : key;
      if (k === '$schema') continue;
      if (SECRET_KEY.test(k))
        throw new ConfigError(
          `${where}: “${key}” — secrets never go in the config file: the API key comes from AGENT_WAYPOINTS_API_KEY or the file AGENT_WAYPOINTS_API_KEY_FILE names, the shared store's connection string from AGENT_WAYPOINTS_PG_URL or AGENT_WAYPOINTS_PG_URL_FILE`,
        );
      check(k, value, where);
      values.set(k, value);
    }
    return new CliConfig(values, file);
  }

  get<T>(key: string): T {
    if (this.values.has(key)) return this.values.get(key) as T;
    const d = declared.get(key);
    if (d) return d.default as T;
    if (key in FOREIGN) return FOREIGN[key] as T;
    throw new Error(`no such setting: ${key}`);
  }
}

export function defaultConfigFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return path.join(agentHome(env), 'agent-waypoints.json');
}

/** Nested objects to dotted keys; a setting whose value is itself an object (prices, windows, files.exclude) stays whole. */
function flatten(obj: Record<string, unknown>, prefix = ''): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix + k;
    const bare = key.startsWith(PREFIX) ? key.slice(PREFIX.length) : key;
    if (isObject(v) && !declared.has(bare) && !(bare in FOREIGN)) out.push(...flatten(v, `${key}.`));
    else out.push([key, v]);
  }
  return out;
}

function check(key: string, value: unknown, where: string): void {
  const d = declared.get(key);
  const def = d?.default ?? FOREIGN[key];
  if (def === undefined && !(key in FOREIGN)) {
    throw new ConfigError(
      `${where}: unknown setting “${key}” (the settings are the extension's, without "agentWaypoints.")`,
    );
  }
  const kind = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);
  if (kind(value) !== kind(def)) throw new ConfigError(`${where}: “${key}” must be a ${kind(def)}, not ${kind(value)}`);
  if (d?.enum && !d.enum.includes(value))
    throw new ConfigError(`${where}: “${key}” must be one of ${d.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  if (Array.isArray(value) && value.some((x) => typeof x !== 'string'))
    throw new ConfigError(`${where}: “${key}” must be a list of strings`);
}

function on(globs: string[]): Record<string, boolean> {
  return Object.fromEntries(globs.map((g) => [g, true]));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
