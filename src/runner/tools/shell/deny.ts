// The deny list: finds a denied program anywhere a command line can start one — each command of
// the tree (substitutions, subshells, functions, here-documents included), after wrappers (`sudo`,
// `env X=1`, `timeout 5`, `xargs`, `find -exec`), behind a path or a backslash (`/bin/rm`, `\rm`),
// and inside the scripts of `sh -c '…'` and `eval`. Where it cannot see (a program only known when
// it runs, a script read from a file), it says so: the policy then asks instead of running. A
// guard rail, not a sandbox: an allowed interpreter can still do anything its script says.
import { readCommands } from './reading';

export type DenyFinding =
  | { kind: 'denied'; entry: string; command: string }
  | { kind: 'unsure'; reason: string }
  | { kind: 'unavailable' }
  | null;

/** Programs that run the program named in their arguments. */
const WRAPPERS = new Set(
  (
    'sudo doas su runuser env command builtin exec nohup nice ionice chrt taskset time timeout stdbuf ' +
    'setsid unbuffer xargs parallel watch flock chroot unshare nsenter strace ltrace fakeroot firejail ' +
    'coproc busybox systemd-run script'
  ).split(' '),
);
const SHELLS = new Set('sh bash dash zsh ksh mksh ash fish'.split(' '));
/** Windows: cmd.exe and PowerShell run their arguments; start and call run a program. */
const WINDOWS_WRAPPERS = new Set(['cmd', 'powershell', 'pwsh', 'start', 'call']);
const MAX_DEPTH = 4;

type Words = readonly (string | null)[];

interface Scan {
  entries: string[][];
  windows: boolean;
  denied: { entry: string; command: string } | null;
  unsure: string | null;
}

export function findDenied(text: string, denyList: readonly string[], platform: NodeJS.Platform): DenyFinding {
  const windows = platform === 'win32';
  const entries = denyList
    .map((e) => e.trim().split(/\s+/).filter(Boolean))
    .filter((e) => e.length > 0)
    .map((e) => (windows ? e.map((w) => w.toLowerCase()) : e));
  if (entries.length === 0) return null;
  const scan: Scan = { entries, windows, denied: null, unsure: null };
  if (windows) for (const words of cmdWords(text)) checkCommand(words, scan, 0);
  if (!scanScript(text, scan, 0) && !windows) return { kind: 'unavailable' };
  if (scan.denied) return { kind: 'denied', ...scan.denied };
  return scan.unsure ? { kind: 'unsure', reason: scan.unsure } : null;
}

/** False when the grammar is not available. */
function scanScript(text: string, scan: Scan, depth: number): boolean {
  const seen = readCommands(text);
  if (!seen) return false;
  if (seen.unsure) scan.unsure ??= seen.unsure;
  for (const words of seen.commands) checkCommand(words, scan, depth);
  return true;
}

function checkCommand(words: Words, scan: Scan, depth: number): void {
  const first = words[0];
  if (first === undefined) return;
  const wrapper =
    first !== null && (WRAPPERS.has(name(first, scan)) || (scan.windows && WINDOWS_WRAPPERS.has(name(first, scan))));
  // Behind a wrapper any later word may be the program (`sudo -u x rm`, `timeout 5 rm`).
  const starts = wrapper ? words.map((_, i) => i) : name(first ?? '', scan) === 'find' ? findExecs(words) : [0];
  for (const i of starts) checkAt(words, i, scan, depth);
}

/** `find … -exec rm {} ;`: the programs after -exec, -execdir, -ok, -okdir. */
function findExecs(words: Words): number[] {
  const out = [0];
  words.forEach((w, i) => {
    if (w !== null && /^-(exec|execdir|ok|okdir)$/.test(w) && i + 1 < words.length) out.push(i + 1);
  });
  return out;
}

function checkAt(words: Words, i: number, scan: Scan, depth: number): void {
  const shown = show(words);
  const prog = words[i];
  if (prog === null || prog === undefined) {
    scan.unsure ??= `the program of "${shown}" is only known when it runs`;
    return;
  }
  const n = name(prog, scan);
  for (const entry of scan.entries) {
    if (entry[0] !== n) continue;
    const rest = entry.slice(1);
    const args = rest.map((_, k) => words[i + 1 + k]);
    if (args.some((a) => a === null)) scan.unsure ??= `"${shown}" may match the deny list entry "${entry.join(' ')}"`;
    else if (rest.every((w, k) => w === (scan.windows ? args[k]?.toLowerCase() : args[k])))
      scan.denied ??= { entry: entry.join(' '), command: shown };
  }
  if (SHELLS.has(n) || n === 'eval') innerScripts(words.slice(i), n === 'eval', scan, depth);
  else if (n === 'source' || n === '.') scan.unsure ??= `"${shown}" runs a script the deny list cannot see`;
}

/** `sh -c 'rm x'`, `bash -lc "…"`, `eval "rm x"`: the script is read as a command line too. */
function innerScripts(words: Words, isEval: boolean, scan: Scan, depth: number): void {
  const shown = show(words);
  const args = words.slice(1);
  if (depth >= MAX_DEPTH) {
    scan.unsure ??= `"${shown}" nests scripts too deeply to check`;
    return;
  }
  if (args.some((a) => a === null)) {
    scan.unsure ??= `the script of "${shown}" is only known when it runs`;
    return;
  }
  const literal = args as string[];
  if (isEval) {
    scanScript(literal.join(' '), scan, depth + 1);
    return;
  }
  if (!literal.some((a) => /^-[a-zA-Z]*c/.test(a))) {
    scan.unsure ??= `"${shown}" runs a script (from a file or its input) the deny list cannot see`;
    return;
  }
  for (const a of literal) if (!a.startsWith('-')) scanScript(a, scan, depth + 1);
}

/** The program's name as the deny list compares it: no directory, no leading backslash. */
function name(word: string, scan: Pick<Scan, 'windows'>): string {
  if (!scan.windows) return word.slice(word.lastIndexOf('/') + 1);
  const base = word.slice(Math.max(word.lastIndexOf('/'), word.lastIndexOf('\\')) + 1).toLowerCase();
  return base.replace(/\.(exe|cmd|bat|com|ps1)$/, '');
}

/** cmd.exe, read crudely: `^` escapes dropped, split at & | ( ) < > and line ends, quotes dropped. */
function cmdWords(text: string): string[][] {
  return text
    .replace(/\^/g, '')
    .split(/[&|()<>\r\n]+/)
    .map((part) => part.replace(/"/g, ' ').trim().split(/\s+/).filter(Boolean))
    .filter((w) => w.length > 0);
}

function show(words: Words): string {
  return words.map((w) => (w === null ? '…' : w)).join(' ');
}
