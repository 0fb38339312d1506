// A command's OS sandbox from the policy's verdict to the run's records: the profile it runs under
// (recorded with the intent as a hash and a line), what the sandbox blocked (recorded with the
// result), the retry with more access the user may approve, and what the model is told when the
// command ran again. Pure: the same on first run and on resume.
import type { Approval, FileChange, SandboxAccess, SandboxBlocked, SandboxRun } from '../../store/api/schema';
import { canonicalJson, sha256 } from '../hash';
import type { SandboxReport } from '../sandbox';
import type { CommandSandbox } from '../tools/policy';

/** A call runs at most this often: once, and then retries the user approved one by one. */
export const MAX_ATTEMPTS = 4;

/** What the sandbox refused, as the records keep it (null: nothing). Hosts once each, ports aside. */
export function blockedOf(r: SandboxReport | undefined): SandboxBlocked | null {
  if (!r || r.setupError) return null;
  const domains = [...new Set(r.domains.map((d) => d.host.toLowerCase()))].slice(0, 50);
  const b = { domains, writes: r.writes.slice(0, 20), unix_sockets: r.unixSockets, process_limit: r.processLimit };
  return domains.length > 0 || b.writes.length > 0 || b.unix_sockets || b.process_limit ? b : null;
}

/** Whether more access could help: a domain to allow, or a write or socket only outside the sandbox. */
export function wantsRetry(b: SandboxBlocked | undefined): b is SandboxBlocked {
  return Boolean(b && (b.domains.length > 0 || b.writes.length > 0 || b.unix_sockets));
}

/** "network access to registry.npmjs.org, to write .git/config". */
function wanted(b: SandboxBlocked): string {
  return [
    ...(b.domains.length > 0 ? [`network access to ${b.domains.join(', ')}`] : []),
    ...(b.writes.length > 0 ? [`to write ${b.writes.join(', ')}`] : []),
    ...(b.unix_sockets ? ['a unix socket'] : []),
  ].join(', ');
}

/** The approval's text: what the command wanted, and what each answer does. */
export function retryReason(b: SandboxBlocked): string {
  return `The sandbox blocked this command: it wanted ${wanted(b)}. It runs again only if you allow it; denied, the model gets the blocked result.`;
}

/** The domains granted for the rest of the run: every approved retry's. */
export function grantedDomains(approvals: Iterable<Approval>): string[] {
  const out = new Set<string>();
  for (const a of approvals) {
    const access = a.retry && a.decision?.kind === 'approve' ? a.decision.access : undefined;
    if (access?.kind === 'domains') for (const d of access.domains) out.add(d);
  }
  return [...out];
}

export function withDomains(box: CommandSandbox, domains: readonly string[]): CommandSandbox {
  const extra = domains.filter((d) => !box.allowedDomains.includes(d));
  return extra.length === 0 ? box : { ...box, allowedDomains: [...box.allowedDomains, ...extra] };
}

/** Where a command runs, for its intent. */
export function sandboxRun(
  box: CommandSandbox | undefined,
  approvedBy: 'policy' | 'user',
  access?: SandboxAccess,
): SandboxRun {
  if (box) return { kind: 'sandboxed', ...describeSandbox(box) };
  const reason =
    access?.kind === 'unsandboxed'
      ? 'the user approved running it once outside the sandbox after the sandbox blocked it'
      : approvedBy === 'user'
        ? 'approved by the user'
        : 'run without asking by the policy (the allow list, or commands on auto)';
  return { kind: 'unsandboxed', reason };
}

/** A stable description of a sandbox: its hash over what it allows, and that in a line. */
export function describeSandbox(box: CommandSandbox): { profile: string; summary: string } {
  const sorted = (a?: readonly string[]) => [...(a ?? [])].sort();
  const what = {
    workspace: box.workspace,
    allowedDomains: sorted(box.allowedDomains),
    limits: box.limits,
    readOnly: sorted(box.readOnly),
    hidden: sorted(box.hidden),
    writable: sorted(box.writable),
    envNames: sorted(box.envNames),
  };
  const d = what.allowedDomains;
  const gib = (n: number) => `${+(n / 1024 ** 3).toFixed(2)} GiB`;
  const summary = [
    `workspace ${box.workspace === 'write' ? 'writable' : 'read-only'}`,
    d.length === 0 ? 'network: none' : `network: ${d.length > 5 ? `${d.length} domains` : d.join(', ')}`,
    `${box.limits.processes} processes, ${gib(box.limits.memoryBytes)} memory, ${gib(box.limits.tmpBytes)} tmp`,
    ...(what.writable.length > 0 ? [`also writable: ${what.writable.join(', ')}`] : []),
  ].join(' · ');
  return { profile: sha256(canonicalJson(what)), summary };
}

/** The model's tool message for a call that ran again: what was blocked, what the user allowed, the new output. */
export function retriedContent(blocked: SandboxBlocked | undefined, access: SandboxAccess, output: string): string {
  const what = blocked ? wanted(blocked) : '';
  const allowed =
    access.kind === 'domains'
      ? `allowed ${access.domains.join(', ')} for this run`
      : 'approved running it once outside the sandbox';
  return `[The sandbox blocked this command${what ? ` (it wanted ${what})` : ''}; the user ${allowed} and it ran again:]\n${output}`;
}

/** The changes of every attempt as one: the first before-image of a path, its last after-image. */
export function composeChanges(earlier: readonly FileChange[] | undefined, now: readonly FileChange[]): FileChange[] {
  const byPath = new Map<string, FileChange>();
  for (const f of earlier ?? []) byPath.set(f.path, f);
  for (const f of now) {
    const first = byPath.get(f.path);
    byPath.set(f.path, first ? { path: f.path, before: first.before, after: f.after } : f);
  }
  return [...byPath.values()];
}
