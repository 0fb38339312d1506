// A child process that answers one JSON line per command (test/torture/lockChild.ts: a "window"
// contending for a run): send a command, await its answer, kill it.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export class Window {
  private lines: string[] = [];
  private waiters: ((l: string) => void)[] = [];
  private buf = '';
  readonly proc: ChildProcessWithoutNullStreams;

  constructor(js: string, env: Record<string, string>) {
    this.proc = spawn(process.execPath, [js], { env: { ...process.env, ...env } });
    this.proc.stdout.on('data', (d: Buffer) => {
      this.buf += d.toString('utf8');
      let i: number;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        const w = this.waiters.shift();
        if (w) w(line);
        else this.lines.push(line);
      }
    });
  }

  next(): Promise<Record<string, unknown>> {
    const l = this.lines.shift();
    if (l !== undefined) return Promise.resolve(JSON.parse(l));
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no answer from the child within 20 s')), 20_000);
      this.waiters.push((line) => (clearTimeout(t), resolve(JSON.parse(line))));
    });
  }

  send(cmd: string): void {
    this.proc.stdin.write(`${cmd}\n`);
  }

  kill(): Promise<void> {
    return new Promise((r) => {
      this.proc.once('exit', () => r());
      this.proc.kill('SIGKILL');
    });
  }
}
