// What the sandbox refused a command, as data the caller can show ("blocked: write to
// .git/hooks/pre-commit; network: registry.npmjs.org") and the model can act on. The proxy knows
// the domains it refused. Refused writes and unix sockets are read from the command's error
// output: the kernel answers EROFS for a read-only mount (EBUSY for moving a mount point, EXDEV
// for linking across one) and the seccomp filter EAFNOSUPPORT for a unix socket — messages
// programs print in a few well-known shapes. A program that swallows its errors leaves nothing to
// read: the report then says less, the sandbox refuses just the same.
import path from 'node:path';
import type { RefusedDomain } from './proxy';

export interface SandboxReport {
  /** Paths a write was refused at, workspace-relative when inside it (at most MAX_PATHS). */
  writes: string[];
  /** Hosts the proxy refused, each once, in order. */
  domains: RefusedDomain[];
  /** A unix socket (docker, an ssh agent, an editor's socket) was refused. */
  unixSockets: boolean;
  /** A fork failed for want of processes: the process limit was reached. */
  processLimit: boolean;
  /** bubblewrap could not set the sandbox up: the command did not run. */
  setupError: string | null;
}

const MAX_PATHS = 20;
const WRITE_REFUSED = /Read-only file system|EROFS|Device or resource busy|EBUSY|Invalid cross-device link|EXDEV/;
const REASONS = [': Read-only file system', ': Device or resource busy', ': Invalid cross-device link'];
const QUOTED = /['‘"`]([^'’"`\n]+)['’"`]/;

/** The report for one command, from its error output and what the proxy refused. */
export function sandboxReport(
  stderr: string,
  workspaceRoot: string,
  domains: readonly RefusedDomain[],
  started: boolean,
): SandboxReport {
  const setup = /^bwrap: (.*)$/m.exec(stderr.slice(0, 4096));
  return {
    writes: refusedWrites(stderr, workspaceRoot),
    domains: [...domains],
    unixSockets: /Address family not supported by protocol|EAFNOSUPPORT/.test(stderr),
    processLimit: /(fork|spawn|clone)[^\n]*(Resource temporarily unavailable|EAGAIN)|(can't|cannot|Cannot) fork/.test(
      stderr,
    ),
    setupError: started
      ? null
      : (setup?.[1]?.trim() ?? (stderr.trim().slice(0, 500) || 'bubblewrap did not start the command')),
  };
}

export function refusedWrites(stderr: string, workspaceRoot: string): string[] {
  const out = new Set<string>();
  for (const line of stderr.split('\n')) {
    if (out.size >= MAX_PATHS) break;
    if (!WRITE_REFUSED.test(line)) continue;
    const p = pathIn(line);
    if (p) out.add(shown(p, workspaceRoot));
  }
  return [...out];
}

/** The path a refusal line names: the first quoted one, or the last word before the reason. */
function pathIn(line: string): string | null {
  const q = QUOTED.exec(line);
  if (q) return q[1]!;
  const at = REASONS.map((r) => line.indexOf(r)).find((i) => i > 0);
  if (at === undefined) return null;
  const word = line.slice(0, at).trim().split(/\s+/).pop() ?? '';
  return word === '' || /^\d+$/.test(word) ? null : word;
}

function shown(p: string, root: string): string {
  if (!path.isAbsolute(p)) return p;
  const rel = path.relative(root, p);
  return rel === '' ? '.' : rel.startsWith('..') || path.isAbsolute(rel) ? p : rel;
}

/** One line for the model and the card; null when the sandbox refused nothing. */
export function sandboxSummary(r: SandboxReport): string | null {
  if (r.setupError) return `the sandbox could not start: ${r.setupError}`;
  const parts: string[] = [];
  if (r.writes.length > 0) parts.push(`write to ${r.writes.join(', ')} (read-only in the sandbox)`);
  if (r.domains.length > 0)
    parts.push(
      `network: ${r.domains.map((d) => (d.port === 443 || d.port === 80 ? d.host : `${d.host}:${d.port}`)).join(', ')} (not allowed)`,
    );
  if (r.unixSockets) parts.push('a unix socket (refused in the sandbox)');
  if (r.processLimit) parts.push('more processes (the limit was reached)');
  return parts.length > 0 ? `blocked: ${parts.join('; ')}` : null;
}
