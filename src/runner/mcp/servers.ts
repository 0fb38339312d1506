// The configured MCP servers: one connection each, started lazily when a run first needs tools,
// replaced when its definition changes (a new identity is a new server), stopped on dispose. The
// ToolProvider the registry asks; the Runs view shows status().
import { Emitter } from '../../common/emitter';
import { errorMessage } from '../../common/errors';
import type { ToolProvider } from '../tools/external';
import type { Tool } from '../tools/types';
import type { ServerDef } from './config';
import { type ConnectionOptions, McpConnection, type ServerState } from './connection';
import { mcpTool } from './tools';

export interface ServerStatus {
  name: string;
  source: ServerDef['source'];
  transport: ServerDef['transport'];
  /** `node server.js`, or the URL. */
  target: string;
  identity: string;
  state: ServerState;
  /** Tool names as the model sees them, and their names at the server. */
  tools: { name: string; remoteName: string; description: string; readOnlyHint: boolean }[];
  /** Tools the server lists but that cannot be offered (a JSON Schema that does not compile). */
  skipped: string[];
}

export interface McpServersOptions extends ConnectionOptions {
  callTimeoutMs(): number;
  callTotalTimeoutMs(): number;
}

export class McpServers implements ToolProvider {
  readonly id = 'mcp';
  readonly onDidChange = new Emitter<void>();
  private readonly connections = new Map<string, McpConnection>();
  private configErrors: string[] = [];
  /** Per server, its tools as registry tools (rebuilt when its list changes). */
  private readonly built = new Map<McpConnection, { list: unknown; tools: Tool[]; skipped: string[] }>();

  constructor(private readonly opts: McpServersOptions) {}

  /** The definitions now (workspace + user). Unchanged servers keep running; changed ones are stopped and start anew on next use. */
  setDefinitions(defs: readonly ServerDef[], errors: readonly string[] = []): void {
    this.configErrors = [...errors];
    const next = new Map(defs.map((d) => [d.name, d]));
    for (const [name, conn] of this.connections) {
      const d = next.get(name);
      if (d && d.identity === conn.def.identity && sameSecrets(d, conn.def)) continue;
      conn.dispose();
      this.built.delete(conn);
      this.connections.delete(name);
    }
    for (const d of defs) {
      if (this.connections.has(d.name)) continue;
      const conn = new McpConnection(d, this.opts);
      conn.onDidChange.on(() => this.onDidChange.emit());
      this.connections.set(d.name, conn);
    }
    this.onDidChange.emit();
  }

  get errors(): readonly string[] {
    return this.configErrors;
  }

  get size(): number {
    return this.connections.size;
  }

  /**
   * Starts what is not running (lazily, in parallel) and returns every ready server's tools. Waits
   * at most the start timeout (or until cancelled): a server still starting — one waiting for its
   * `${input:…}` to be typed — is simply not offered yet; the run never waits on it.
   */
  async tools(signal?: AbortSignal): Promise<readonly Tool[]> {
    const conns = [...this.connections.values()];
    const started = Promise.all(conns.map((c) => c.ensureStarted().catch(() => undefined)));
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.opts.startTimeoutMs + 1000);
      onAbort = () => resolve();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([started, gaveUp]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
    return conns.flatMap((c) => (c.state.kind === 'ready' ? this.toolsOf(c).tools : []));
  }

  status(): ServerStatus[] {
    return [...this.connections.values()].map((c) => {
      const def = c.def;
      const built = c.state.kind === 'ready' ? this.toolsOf(c) : { tools: [], skipped: [] };
      return {
        name: def.name,
        source: def.source,
        transport: def.transport,
        target: def.transport === 'stdio' ? [def.command, ...def.args].join(' ') : def.url,
        identity: def.identity,
        state: c.state,
        tools: built.tools.map((t) => ({
          name: t.name,
          remoteName: t.external!.remoteName,
          description: t.description,
          readOnlyHint: t.external!.readOnlyHint,
        })),
        skipped: built.skipped,
      };
    });
  }

  async restart(name: string): Promise<void> {
    const conn = this.connections.get(name);
    if (!conn) throw new Error(`No MCP server named "${name}" is configured.`);
    await conn.restart();
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.stop('stopped with the window')));
  }

  dispose(): void {
    for (const c of this.connections.values()) c.dispose();
    this.connections.clear();
    this.onDidChange.dispose();
  }

  private toolsOf(conn: McpConnection): { tools: Tool[]; skipped: string[] } {
    const list = conn.tools();
    const cached = this.built.get(conn);
    if (cached && cached.list === list) return cached;
    const tools: Tool[] = [];
    const skipped: string[] = [];
    for (const t of list) {
      try {
        tools.push(mcpTool(conn, t, this.opts));
      } catch (err) {
        skipped.push(`${t.name}: ${errorMessage(err)}`);
        this.opts.log('warn', `MCP server "${conn.def.name}": tool ${t.name} is not offered: ${errorMessage(err)}`);
      }
    }
    const entry = { list, tools, skipped };
    this.built.set(conn, entry);
    return entry;
  }
}

/** Values that are not part of the identity but change what is started (env values, headers). */
function sameSecrets(a: ServerDef, b: ServerDef): boolean {
  const values = (d: ServerDef) => JSON.stringify(d.transport === 'stdio' ? d.env : d.headers);
  return values(a) === values(b);
}
