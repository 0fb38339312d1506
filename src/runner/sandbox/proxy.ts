// The sandbox's only way out: an HTTP proxy on the host that lets a command reach the allowed
// domains and refuses — and records — every other one. The command's network namespace has no
// route anywhere; inside it, the in-sandbox helper (netHelper.pl) listens on 127.0.0.1:3128 and
// hands that listening socket to the host over the spawn's IPC channel, so the host accepts the
// command's connections directly: no unix socket inside the sandbox, no relay process.
// HTTPS goes through CONNECT (the proxy sees the host name, never the content); plain HTTP is
// forwarded when the request's host and its Host header agree. An allowed name that resolves to
// this machine's loopback or link-local addresses (the cloud metadata service) is refused unless
// the allow list names that address itself. What a domain allows it allows: a service on an
// allowed domain that relays elsewhere (domain fronting) is beyond what a proxy can see.
import dns from 'node:dns/promises';
import http from 'node:http';
import net from 'node:net';
import { domainAllowed } from './profile';

export interface RefusedDomain {
  host: string;
  port: number;
  /** ms since the epoch. */
  at: number;
  why: string;
}

/** Connections open at once per command: the proxy's cost stays bounded whatever the command does. */
const MAX_CONNECTIONS = 64;
/** How many refusals are kept per command (each host once). */
const MAX_REFUSALS = 50;
const CONNECT_TIMEOUT_MS = 15_000;

export class SandboxProxy {
  readonly refused: RefusedDomain[] = [];
  private readonly server = http.createServer();
  private readonly sockets = new Set<net.Socket>();
  private readonly listeners: net.Server[] = [];

  constructor(private readonly allowed: readonly string[]) {
    this.server.on('request', (req, res) => void this.forward(req, res));
    this.server.on(
      'connect',
      (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => void this.tunnel(req, socket, head),
    );
    this.server.on('clientError', (_err, socket: net.Socket) => socket.destroy());
  }

  /** The listening socket the helper made inside the sandbox: its connections are the command's. */
  attach(listener: net.Server): void {
    this.listeners.push(listener);
    listener.on('connection', (s: net.Socket) => {
      if (this.sockets.size >= MAX_CONNECTIONS) return void s.destroy();
      this.track(s);
      this.server.emit('connection', s);
    });
    listener.on('error', () => listener.close());
  }

  close(): void {
    for (const l of this.listeners) l.close();
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  private track(s: net.Socket): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => s.destroy());
  }

  private async tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    const target = parseAuthority(req.url ?? '');
    const upstream = target ? await this.open(target.host, target.port) : { refused: 'not a host and port' };
    if (!(upstream instanceof net.Socket)) {
      const [status, text] = answer(target?.host ?? req.url ?? '', upstream);
      client.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${text}\n`);
      return;
    }
    this.track(upstream);
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client).on('error', () => undefined);
    client.pipe(upstream).on('error', () => undefined);
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let url: URL | null = null;
    try {
      url = new URL(req.url ?? '');
    } catch {
      // origin-form: not a proxy request
    }
    const hostHeader = (req.headers.host ?? '').toLowerCase();
    if (!url || url.protocol !== 'http:' || (hostHeader !== '' && hostHeader !== url.host.toLowerCase())) {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('The sandbox proxy takes absolute http:// URLs whose Host header agrees.\n');
      return;
    }
    const port = Number(url.port || 80);
    const upstream = await this.open(url.hostname, port);
    if (!(upstream instanceof net.Socket)) {
      const [status, text] = answer(url.hostname, upstream);
      res.writeHead(Number(status.slice(0, 3)), { 'content-type': 'text/plain' }).end(`${text}\n`);
      return;
    }
    this.track(upstream);
    const headers = { ...req.headers };
    for (const h of ['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive']) delete headers[h];
    const out = http.request(
      { createConnection: () => upstream, method: req.method, path: `${url.pathname}${url.search}`, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  }

  /** A connection to an allowed host, why the sandbox refused it (recorded), or why it failed. */
  private async open(host: string, port: number): Promise<net.Socket | Failure> {
    const name = host.replace(/^\[|\]$/g, '');
    if (!domainAllowed(this.allowed, name)) return this.refuse(name, port, 'not on the allowed domains');
    let address: string | undefined;
    try {
      const literal = net.isIP(name) !== 0;
      const found = literal ? [{ address: name }] : await dns.lookup(name, { all: true });
      address = found.find((a) => literal || !localAddress(a.address))?.address;
    } catch {
      return this.refuse(name, port, 'its name does not resolve');
    }
    if (!address) return this.refuse(name, port, 'it resolves to this machine (loopback or link-local)');
    return new Promise((resolve) => {
      const s = net.connect({ host: address, port, timeout: CONNECT_TIMEOUT_MS });
      s.once('connect', () => {
        s.setTimeout(0);
        resolve(s);
      });
      s.once('timeout', () => s.destroy(new Error('timed out')));
      s.once('error', (e) => resolve({ failed: e.message }));
    });
  }

  private refuse(host: string, port: number, why: string): Failure {
    if (this.refused.length < MAX_REFUSALS && !this.refused.some((r) => r.host === host && r.port === port))
      this.refused.push({ host, port, at: Date.now(), why });
    return { refused: why };
  }
}

type Failure = { refused: string } | { failed: string };

function answer(host: string, f: Failure): [status: string, text: string] {
  return 'refused' in f
    ? ['403 Forbidden', `Blocked by the sandbox: ${host} (${f.refused}).`]
    : ['502 Bad Gateway', `The sandbox proxy could not reach ${host}: ${f.failed}.`];
}

/** `host:port` of a CONNECT request (IPv6 in brackets). */
export function parseAuthority(s: string): { host: string; port: number } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:/\s[\]]+):(\d{1,5})$/.exec(s);
  const port = m ? Number(m[2]) : 0;
  return m && port > 0 && port < 65536 ? { host: m[1]!.toLowerCase(), port } : null;
}

/** Loopback, unspecified and link-local addresses (the metadata service lives at 169.254.169.254). */
export function localAddress(a: string): boolean {
  const v4 = a.startsWith('::ffff:') ? a.slice(7) : a;
  if (net.isIPv4(v4)) return /^(127\.|0\.|169\.254\.)/.test(v4);
  const l = a.toLowerCase();
  return l === '::1' || l === '::' || /^fe[89ab]/.test(l);
}
