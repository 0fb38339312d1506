// Who decides an approval and from where (DecidedBy): the person's user name on this machine, and
// whether through a VS Code window or the command line. Recorded with the decision, shown with it.
import os from 'node:os';
import type { DecidedBy } from '../store/api/schema';

/** The user of this process (a container without a passwd entry gives its uid), never a secret. */
export function userName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return process.env.USER ?? process.env.USERNAME ?? `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}

/** A decision made here: this process's user on `host`, through `via`. */
export function localDecider(host: string, via: DecidedBy['via'] = 'window', windowId?: string): DecidedBy {
  return { user: userName(), host, via, ...(windowId ? { window_id: windowId } : {}) };
}

/** "alice@laptop (window)": the short form the run view shows on a decided card. */
export function describeDecider(by: DecidedBy): string {
  return `${by.user}@${by.host} (${by.via === 'cli' ? 'command line' : 'window'})`;
}
