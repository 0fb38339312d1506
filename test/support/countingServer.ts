// A local HTTP server counting its requests: the domain a sandboxed command wants to reach.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export async function countingServer(): Promise<{ port: number; hits: () => number; close: () => void }> {
  let hits = 0;
  const server = http.createServer((_q, s) => (hits++, s.end('reached\n')));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, hits: () => hits, close: () => server.close() };
}
