// A throwaway PostgreSQL cluster for the tests and the benchmark: Debian's `postgresql` package
// (scripts/tools.mjs installs it), `initdb` into a temp folder, `pg_ctl start` listening on a unix
// socket in that folder only (no TCP port to collide with anything), stopped and deleted after.
// `initdb` refuses to run as root (CI runs as root), so as root the cluster belongs to the
// `postgres` user the package creates, in a folder that user owns.
//
// One cluster per test process: `sharedPostgres()` starts it on first use and stops it when the
// process exits (a parallel run's worker runs file after file on it); the main process's global
// teardown (test/support/rootHooks.ts) stops whatever is still running in the run's folder. Tests isolate themselves by workspace
// identity (a fresh one per test), or by a database of their own (`createDatabase`).
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface PgCluster {
  /** Folder holding the data directory, the socket and the log. */
  readonly dir: string;
  readonly socketDir: string;
  readonly port: number;
  /** A connection string to `database` (default `postgres`) as the cluster's superuser, over the socket. */
  url(database?: string): string;
  /** `pg_ctl restart -m immediate` (a crash: no shutdown checkpoint, recovery from the WAL) or `-m fast`. */
  restart(mode?: 'immediate' | 'fast'): void;
  /** `pg_ctl stop -m immediate`: the server is gone until start(). */
  stopServer(mode?: 'immediate' | 'fast'): void;
  start(): void;
  /** `pg_ctl status`: whether the server runs. */
  running(): boolean;
  /** Creates a database of its own (for tests that change the schema itself). */
  createDatabase(prefix?: string): Promise<string>;
  /** Stops the server and deletes everything. */
  destroy(): void;
}

export interface PgClusterOptions {
  /**
   * fsync=off makes the tests fast on a shared 2-core machine and changes nothing they check: a
   * crash of the server process (`-m immediate`) recovers from the WAL in the page cache either
   * way. The benchmark keeps fsync on (a durable commit is what it measures).
   */
  fsync?: boolean;
  log?: (line: string) => void;
}

/** The package's versioned bin folder (initdb and pg_ctl are not on PATH). */
export function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions[0])
    throw new Error(
      'PostgreSQL is not installed: run `npm run tools` (as root it installs the Debian package `postgresql`)',
    );
  return path.join(root, versions[0], 'bin');
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a PostgreSQL program as the cluster's owner (postgres when we are root); true if it exited 0. */
function asOwner(bin: string, args: string[], opts: { allowFail?: boolean } = {}): boolean {
  const [cmd, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0 && !opts.allowFail)
    throw new Error(
      `${path.basename(bin)} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`,
    );
  return r.status === 0;
}

export function startCluster(opts: PgClusterOptions = {}): PgCluster {
  const bin = postgresBin();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-pg-'));
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  if (isRoot()) execFileSync('chown', ['postgres:postgres', dir]);
  const port = 5432;
  asOwner(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const settings = [
    `-k ${dir}`,
    `-p ${port}`,
    "-c listen_addresses=''",
    `-c fsync=${opts.fsync === false ? 'off' : 'on'}`,
    '-c max_connections=200',
    '-c shared_buffers=64MB',
  ].join(' ');
  const pgCtl = path.join(bin, 'pg_ctl');
  const ctl = (...args: string[]) => void asOwner(pgCtl, ['-D', data, '-l', logFile, '-w', '-t', '60', ...args]);
  const start = () => ctl('-o', settings, 'start');
  start();
  opts.log?.(`postgres: cluster in ${dir} (socket), fsync ${opts.fsync === false ? 'off' : 'on'}`);
  let destroyed = false;
  const url = (database = 'postgres') =>
    `postgresql://postgres@/${database}?host=${encodeURIComponent(dir)}&port=${port}`;
  return {
    dir,
    socketDir: dir,
    port,
    url,
    restart: (mode = 'immediate') => ctl('-m', mode, '-o', settings, 'restart'),
    stopServer: (mode = 'immediate') => ctl('-m', mode, 'stop'),
    start,
    running: () => asOwner(pgCtl, ['-D', data, 'status'], { allowFail: true }),
    async createDatabase(prefix = 'aw') {
      const name = `${prefix}_${crypto.randomBytes(4).toString('hex')}`;
      const c = new pg.Client({ connectionString: url() });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return name;
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      asOwner(pgCtl, ['-D', data, '-m', 'immediate', 'stop'], { allowFail: true });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

let shared: PgCluster | undefined;

/** The test process's one cluster (fsync off), started on first use, stopped at exit or by the global teardown. */
export function sharedPostgres(): PgCluster {
  if (!shared) {
    shared = startCluster({ fsync: false });
    process.once('exit', stopSharedPostgres);
  }
  return shared;
}

export function stopSharedPostgres(): void {
  shared?.destroy();
  shared = undefined;
}

/**
 * Stops every cluster still running in `dir` (the `aw-pg-*` folders startCluster makes in a test
 * process's TMPDIR), as `pg_ctl stop -m immediate`: what a test process left when it was killed.
 */
export function stopClustersIn(dir: string): void {
  const running = fs
    .readdirSync(dir)
    .filter((n) => n.startsWith('aw-pg-') && fs.existsSync(path.join(dir, n, 'data', 'postmaster.pid')));
  if (running.length === 0) return;
  const pgCtl = path.join(postgresBin(), 'pg_ctl');
  for (const n of running)
    asOwner(pgCtl, ['-D', path.join(dir, n, 'data'), '-m', 'immediate', 'stop'], { allowFail: true });
}

/** A fresh workspace identity: a namespace of its own in the shared database. */
export const freshWorkspace = (label = 'test'): string => `test:${label}-${crypto.randomBytes(6).toString('hex')}`;
