// A TCP proxy in front of the test cluster's socket that can break a connection at the worst moment:
// right after forwarding a chosen statement to the server (it commits; the answer is lost), or
// instead of forwarding it (nothing happens on the server). `down` refuses every new connection,
// so a client cannot ask what became of its statement until `up`. The client's view of a database
// that went away mid-statement, made deterministic.
import net from 'node:net';
import path from 'node:path';

export type Cut = { marker: string; when: 'after-forwarding' | 'before-forwarding' };

export class CuttingProxy {
  private server!: net.Server;
  private armed: Cut | null = null;
  private refusing = false;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  /** Statements cut so far. */
  cuts = 0;

  constructor(
    private readonly socketDir: string,
    private readonly pgPort: number,
  ) {}

  async start(): Promise<this> {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  url(database = 'postgres'): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** The next client message containing `marker` breaks its connection. */
  arm(cut: Cut): void {
    this.armed = cut;
  }

  down(): void {
    this.refusing = true;
  }

  up(): void {
    this.refusing = false;
  }

  /** Breaks every open connection (with `down`: the database is gone for the clients). */
  async dropAll(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  private accept(client: net.Socket): void {
    if (this.refusing) return void client.destroy();
    const upstream = net.connect(path.join(this.socketDir, `.s.PGSQL.${this.pgPort}`));
    this.sockets.add(client).add(upstream);
    let forwarding = false; // a cut statement on its way to the server: its upstream stays open for it
    const drop = () => {
      client.destroy();
      if (!forwarding) upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    // Once the server answers the cut statement, it has run it: then its connection goes too.
    upstream.on('data', (d) => (forwarding ? upstream.destroy() : client.write(d)));
    client.on('data', (d: Buffer) => {
      const cut = this.armed;
      if (cut && d.toString('latin1').includes(cut.marker)) {
        this.armed = null;
        this.cuts++;
        if (cut.when === 'after-forwarding') {
          // the server gets the whole statement; its answer never reaches the client
          forwarding = true;
          upstream.write(d);
          client.destroy();
        } else drop();
        return;
      }
      upstream.write(d);
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}
