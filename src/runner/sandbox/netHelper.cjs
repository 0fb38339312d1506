// @ts-check
// First process inside a sandbox that has network (proxy.ts): listens on 127.0.0.1:<port> in the
// sandbox's own network namespace, sends that listening socket to the host over the IPC channel
// the host opened (an inherited socket pair: no unix socket is created here, which the seccomp
// filter would refuse), closes its copy and the channel, then runs the command and ends as it
// ends. Plain CommonJS with no imports beyond Node's: it runs under the extension host's own
// runtime (Electron as Node, or Node).
// argv: <port> <extra fds> <keep ELECTRON_RUN_AS_NODE: 1|0> <program> [args…]
'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');

const [port, extra, keepElectron, file, ...args] = process.argv.slice(2);

/** @param {string} text @param {number} status */
function fail(text, status) {
  process.stderr.write(`sandbox: ${text}\n`);
  process.exit(status);
}

if (!file || typeof process.send !== 'function')
  fail('the network helper was started without a command or a channel', 125);

const server = net.createServer();
server.on('error', (e) => fail(`the proxy listener could not start: ${e.message}`, 125));
server.listen({ host: '127.0.0.1', port: Number(port) }, () => {
  /** @type {NonNullable<typeof process.send>} */ (process.send)({ listening: Number(port) }, server, {}, (err) => {
    if (err) fail(`the proxy listener could not reach the host: ${err.message}`, 125);
    server.close();
    process.disconnect();
    run();
  });
});

function run() {
  const env = { ...process.env };
  if (keepElectron !== '1') delete env.ELECTRON_RUN_AS_NODE;
  const fds = Array.from({ length: 3 + Number(extra) }, (_, i) => i);
  const child = spawn(/** @type {string} */ (file), args, { stdio: fds, env });
  for (const sig of /** @type {NodeJS.Signals[]} */ (['SIGTERM', 'SIGINT', 'SIGHUP']))
    process.on(sig, () => child.kill(sig));
  child.on('error', (e) =>
    fail(
      `${file}: ${/** @type {NodeJS.ErrnoException} */ (e).code === 'ENOENT' ? 'command not found' : e.message}`,
      127,
    ),
  );
  child.on('exit', (code, signal) => {
    if (code !== null) process.exit(code);
    process.removeAllListeners(signal ?? 'SIGTERM');
    process.kill(process.pid, signal ?? 'SIGTERM');
  });
}
