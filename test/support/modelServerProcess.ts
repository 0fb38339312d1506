// The scripted model server (test/fixtures/modelServer) in a child process: the same server, but
// its work and memory are not the test process's, so a test can measure the host alone.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ScenarioInput } from '../fixtures/modelServer/scenario';
import type { RequestRecord } from '../fixtures/modelServer/server';
import { bundleScript } from './bundleChild';

export interface ModelServerProcess {
  url: string;
  /** What the server has received so far (a copy, read over IPC). */
  requests(): Promise<RequestRecord[]>;
  close(): Promise<void>;
}

let childJs: Promise<string> | undefined;

export async function startModelServerProcess(scenario: ScenarioInput): Promise<ModelServerProcess> {
  childJs ??= bundleScript(path.join(__dirname, '../fixtures/modelServer/child.ts'));
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'aw-scenario-')), 'scenario.json');
  fs.writeFileSync(file, JSON.stringify(scenario));
  const child = spawn(process.execPath, [await childJs, file], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve())).then(() =>
    fs.rmSync(path.dirname(file), { recursive: true, force: true }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: { url: string }) => resolve(m.url));
    child.once('exit', (code) => reject(new Error(`the model server process exited (${code})`)));
  });
  let next = 0;
  return {
    url,
    requests: () => ask<RequestRecord[]>(child, next++, 'requests'),
    close: async () => {
      if (child.exitCode === null) child.send({ ask: 'close' });
      await exited;
    },
  };
}

function ask<T>(child: ChildProcess, id: number, what: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { id?: number; requests?: T }): void => {
      if (m.id !== id) return;
      child.off('message', on);
      resolve(m.requests as T);
    };
    child.on('message', on);
    child.send({ ask: what, id });
  });
}
