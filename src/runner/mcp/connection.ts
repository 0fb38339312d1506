// One MCP server: its process or HTTP session through the official SDK, started lazily, with a state
// the Runs view shows (starting, ready with its tools, failed with the reason). Every call has an
// idle and a total deadline (deadline.ts) and fails with what happened — the server's own error, its
// death, a deadline — never a generic guess: nothing waits on a server forever.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolResult,
  CallToolResultSchema,
  type JSONRPCMessage,
  ListToolsResultSchema,
  McpError,
  type Tool as McpTool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Emitter } from '../../common/emitter';
import { errorMessage } from '../../common/errors';
import type { ServerDef } from './config';
import { CallDeadline, deadlineMessage, serverErrorMessage } from './deadline';
import { DEFAULT_LIMITS, HOST_ERROR, type IntakeLimits, LARGE_RESULT, type LargeResult, MessageIntake } from './intake';
import { type Launch, type LaunchContext, resolveLaunch } from './launch';
import { boundedFetch, BoundedStdioTransport } from './transports';
import { sandboxedCommandLine, type SandboxProfile } from '../sandbox';

export type ServerState =
  | { kind: 'stopped'; reason: string | null }
  | { kind: 'starting' }
  | { kind: 'ready'; tools: number }
  | { kind: 'failed'; reason: string };

export interface CallOptions {
  signal: AbortSignal;
  /** Without progress for this long, the call fails (progress resets it). */
  timeoutMs: number;
  /** The call fails after this long whatever the server sends. */
  totalTimeoutMs: number;
  onProgress?(p: { progress: number; total?: number; message?: string }): void;
}

export interface ConnectionOptions {
  launch: LaunchContext;
  clientVersion: string;
  startTimeoutMs: number;
  log(level: 'info' | 'warn', message: string): void;
  /** What the host reads from a server (intake.ts); tests lower them. */
  limits?: IntakeLimits;
  /**
   * The OS sandbox a stdio server runs in (runner/sandbox; MCP_SERVER_POLICY keeps the workspace
   * read-only), or undefined to start it as configured. A server whose sandbox cannot start fails.
   */
  sandbox?(def: ServerDef): SandboxProfile | undefined;
}

/** A call's answer: the result, or a large one kept as bytes (intake.ts) for the tool to store. */
export type CallAnswer = { result: CallToolResult; large?: undefined } | { large: LargeResult; result?: undefined };

const STDERR_KEEP = 4000;

export class McpConnection {
  readonly onDidChange = new Emitter<void>();
  private current: ServerState = { kind: 'stopped', reason: null };
  private client: Client | null = null;
  private transport: Transport | null = null;
  private intake: MessageIntake | null = null;
  private starting: Promise<void> | null = null;
  private list: McpTool[] = [];
  private stderr = '';
  /** Removes what the running server's sandbox set up, once it is gone. */
  private releaseSandbox: (() => Promise<void>) | null = null;
  /** Bumped on every start and stop, so a late event of an old session changes nothing. */
  private generation = 0;

  constructor(
    readonly def: ServerDef,
    private readonly opts: ConnectionOptions,
  ) {}

  get state(): ServerState {
    return this.current;
  }

  /** The server process's pid (stdio, while it runs). */
  get pid(): number | null {
    return this.transport instanceof BoundedStdioTransport ? this.transport.pid : null;
  }

  /** The server's tools as it last listed them (empty until ready). */
  tools(): readonly McpTool[] {
    return this.list;
  }

  /** Starts the server unless it is running or failed to start (a failure waits for restart()). */
  async ensureStarted(): Promise<void> {
    if (this.current.kind === 'ready' || this.current.kind === 'failed') return;
    this.starting ??= this.start().finally(() => (this.starting = null));
    return this.starting;
  }

  async restart(): Promise<void> {
    await this.stop(null);
    this.setState({ kind: 'stopped', reason: null });
    await this.ensureStarted();
  }

  async stop(reason: string | null = null): Promise<void> {
    this.generation++;
    const client = this.client;
    this.client = null;
    this.transport = null;
    this.intake = null;
    this.list = [];
    if (this.current.kind !== 'failed') this.setState({ kind: 'stopped', reason });
    await client?.close().catch(() => undefined);
    await this.release();
  }

  async callTool(name: string, args: Record<string, unknown>, o: CallOptions): Promise<CallAnswer> {
    await this.ensureStarted();
    const client = this.client;
    const intake = this.intake;
    if (!client || this.current.kind !== 'ready') throw new Error(this.unavailable());
    const gen = this.generation;
    const deadline = new CallDeadline(o.signal, o.timeoutMs, o.totalTimeoutMs);
    try {
      // tools/call through request(), not callTool(): the SDK would check the result against the
      // server's output schema with its own regex engine (external.ts explains why not).
      const result = await client.request(
        { method: 'tools/call', params: { name, arguments: args } },
        CallToolResultSchema,
        {
          signal: deadline.signal,
          // The SDK's own timer only backs ours up: when it fires first, a timeout is not what happened.
          timeout: o.totalTimeoutMs + 60_000,
          onprogress: (p) => {
            deadline.progress();
            o.onProgress?.(p);
          },
        },
      );
      const token = result._meta?.[LARGE_RESULT];
      const large = typeof token === 'string' ? intake?.take(token) : undefined;
      return large ? { large } : { result };
    } catch (err) {
      throw new Error(this.describeCallError(err, o, deadline, gen));
    } finally {
      deadline.dispose();
    }
  }

  private async start(): Promise<void> {
    const gen = ++this.generation;
    this.setState({ kind: 'starting' });
    this.stderr = '';
    let launch: Launch;
    try {
      launch = await this.sandboxed(await resolveLaunch(this.def, this.opts.launch));
    } catch (err) {
      return this.fail(gen, errorMessage(err));
    }
    const intake = new MessageIntake(this.opts.limits ?? DEFAULT_LIMITS, (m) =>
      this.opts.log('warn', `MCP server "${this.def.name}": ${m}`),
    );
    const transport = this.transportFor(launch, intake);
    const client = new Client({ name: 'agent-waypoints', version: this.opts.clientVersion }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.refreshTools(gen));
    client.onclose = () => this.closed(gen);
    try {
      await client.connect(transport, { timeout: this.opts.startTimeoutMs });
      const tools = await this.listAll(client);
      if (gen !== this.generation) return void (await client.close().catch(() => undefined));
      this.client = client;
      this.transport = transport;
      this.intake = intake;
      this.list = tools;
      this.setState({ kind: 'ready', tools: tools.length });
      this.opts.log('info', `MCP server "${this.def.name}" ready: ${tools.length} tools`);
    } catch (err) {
      await client.close().catch(() => undefined);
      await this.release();
      this.fail(gen, `${errorMessage(err)}${this.stderrTail()}`);
    }
  }

  /** The launch inside the sandbox, when the host gives this server one. */
  private async sandboxed(launch: Launch): Promise<Launch> {
    const profile = launch.transport === 'stdio' ? this.opts.sandbox?.(this.def) : undefined;
    if (!profile || launch.transport !== 'stdio') return launch;
    void this.release();
    const argv = [launch.command, ...launch.args];
    const line = await sandboxedCommandLine(profile, {
      argv,
      cwd: launch.cwd ?? profile.workspaceRoot,
      env: launch.env,
    });
    this.releaseSandbox = line.dispose;
    return { ...launch, command: line.command, args: line.args, env: line.env };
  }

  private release(): Promise<void> {
    const r = this.releaseSandbox;
    this.releaseSandbox = null;
    return r ? r() : Promise.resolve();
  }

  private transportFor(launch: Launch, intake: MessageIntake): Transport {
    if (launch.transport === 'stdio') {
      const t = new BoundedStdioTransport({ ...launch, stderr: 'pipe' }, intake);
      t.stderr?.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString('utf8')).slice(-STDERR_KEEP)));
      return t;
    }
    const url = new URL(launch.url);
    const opts = { requestInit: { headers: launch.headers }, fetch: boundedFetch(intake) };
    const t =
      launch.transport === 'sse' ? new SSEClientTransport(url, opts) : new StreamableHTTPClientTransport(url, opts);
    // Every message we send is noted (what each request asked: the intake hands a tool's result aside).
    const send = t.send.bind(t) as (m: JSONRPCMessage, o?: unknown) => Promise<void>;
    (t as { send: typeof send }).send = (m, o) => (intake.sent(m), send(m, o));
    return t;
  }

  private async listAll(client: Client): Promise<McpTool[]> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      // request(), not listTools(): the SDK would compile every output schema with its own ajv.
      const r = await client.request(
        { method: 'tools/list', params: cursor ? { cursor } : {} },
        ListToolsResultSchema,
        { timeout: this.opts.startTimeoutMs },
      );
      tools.push(...r.tools);
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  private async refreshTools(gen: number): Promise<void> {
    const client = this.client;
    if (!client || gen !== this.generation) return;
    try {
      const tools = await this.listAll(client);
      if (gen !== this.generation) return;
      this.list = tools;
      this.setState({ kind: 'ready', tools: tools.length });
    } catch (err) {
      this.opts.log('warn', `MCP server "${this.def.name}": listing its tools again failed: ${errorMessage(err)}`);
    }
  }

  /** The process exited or the session ended: calls in flight fail; the next use starts it again. */
  private closed(gen: number): void {
    // While starting, start() reports the failure itself (with the server's output).
    if (gen !== this.generation || this.current.kind === 'failed' || this.current.kind === 'starting') return;
    const failure = this.transport instanceof BoundedStdioTransport ? this.transport.failure : null;
    const what =
      failure ?? (this.def.transport === 'stdio' ? 'the server process exited' : 'the server closed the connection');
    const reason = `${what}${this.stderrTail()}`;
    this.opts.log('warn', `MCP server "${this.def.name}": ${reason}`);
    void this.release();
    this.generation++;
    this.client = null;
    this.transport = null;
    this.intake = null;
    this.list = [];
    this.setState({ kind: 'stopped', reason });
  }

  private fail(gen: number, reason: string): void {
    if (gen !== this.generation) return;
    this.opts.log('warn', `MCP server "${this.def.name}" failed to start: ${reason}`);
    this.setState({ kind: 'failed', reason });
  }

  private describeCallError(err: unknown, o: CallOptions, deadline: CallDeadline, gen: number): string {
    const who = `MCP server "${this.def.name}"`;
    if (o.signal.aborted) return `The call was cancelled; ${who} was told to stop it.`;
    if (deadline.expired) return deadlineMessage(who, deadline);
    // The session ended under the call (closed() or stop() moved on): that is the failure, with its reason.
    if (gen !== this.generation) {
      const reason = this.current.kind === 'stopped' ? (this.current.reason ?? 'it was stopped') : 'it was stopped';
      return `${who} stopped during the call: ${reason}. The call may have done part of its work.`;
    }
    if (err instanceof McpError && (err.data as Record<string, unknown> | undefined)?.[HOST_ERROR])
      return `${who}: ${err.message.replace(/^(MCP error -?\d+: )+/, '')}`;
    if (err instanceof McpError) return serverErrorMessage(who, err);
    return `${who}: ${errorMessage(err)}`;
  }

  private unavailable(): string {
    const s = this.current;
    if (s.kind === 'failed') return `MCP server "${this.def.name}" is not running: ${s.reason}`;
    if (s.kind === 'stopped' && s.reason) return `MCP server "${this.def.name}" is not running: ${s.reason}`;
    return `MCP server "${this.def.name}" is not running.`;
  }

  /** The server's last words on stderr, for a failure's reason. */
  private stderrTail(): string {
    const t = this.stderr.trim();
    if (!t) return '';
    return `; its last output: ${t.split('\n').slice(-5).join('\n')}`;
  }

  private setState(s: ServerState): void {
    this.current = s;
    this.onDidChange.emit();
  }

  dispose(): void {
    void this.stop();
    this.onDidChange.dispose();
  }
}
