// @ts-check
// How every git Agent Waypoints starts is configured: the project's own read-only git
// (runner/fileJournal/git.ts) and a git the allow list lets the model run (argvRunner.cjs) — the same
// code, so the same configuration. The repository is not trusted to make git run a program.
// Settings go in through GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n, which git reads
// after every configuration file, so no file can turn them back on:
//  - ALWAYS: no fsmonitor, no hooks, no implicitly found bare repository, no pager, no editor, no
//    ext:: transport, no recursing into submodules by configuration; and the host's GIT_* variables
//    (GIT_DIR, GIT_EXEC_PATH, GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF …) are dropped, optional locks and
//    prompts off.
//  - per folder (gitSettings): git's configuration is read first, itself hardened, with
//    `git config --list --show-scope`. Every key that names a program (filters, diff drivers,
//    aliases, credential helpers, ssh, gpg …) set by the repository's own configuration (local,
//    worktree, and the files they include) gets back the value of the user's configuration
//    (system, global) or, where that has none, an off value. Where git 2.39 has no off value (an
//    external diff, a textconv, a merge driver), the value is a fixed shell line that says why and
//    fails, so git stops there instead of running the repository's program.
'use strict';
const { execFile } = require('node:child_process');
const path = require('node:path');
const { inside, realOr } = require('./programs.cjs');

/** @typedef {[key: string, value: string]} Setting */

/** @type {readonly Setting[]} */
const ALWAYS = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'], // hooks are looked up in a folder that cannot exist
  ['safe.bareRepository', 'explicit'],
  ['core.pager', 'cat'],
  ['core.editor', ':'], // git's own "no editor": a commit without -m stops instead of waiting
  ['sequence.editor', ':'],
  ['protocol.ext.allow', 'never'],
  // Submodules are repositories with configurations of their own, not read here: git goes into
  // them only where a command's own options say so, or to see whether their work trees changed.
  ['diff.submodule', 'short'],
  ['status.submoduleSummary', 'false'],
  ['submodule.recurse', 'false'],
  ['fetch.recurseSubmodules', 'false'],
  ['push.recurseSubmodules', 'no'],
];

/** What git reads of its configuration for the per-folder settings. */
const CONFIG_SCAN = ['config', '--list', '--show-scope', '--show-origin', '-z'];

/** Kept from the host's environment: who commits. Every other GIT_* variable redirects or runs something. */
const KEEP_ENV = new Set(['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL']);
const DROP_ENV = new Set(['SSH_ASKPASS']);

const MAX_SCAN_BYTES = 8 * 1024 * 1024;
const SCAN_TIMEOUT_MS = 15_000;
const MAX_SETTINGS = 2000;

/** @param {string} s */
const printable = (s) => s.replace(/[^\w.:/@+-]/g, '_').slice(0, 200);

/**
 * A shell line that says git did not run a program `key` names, and fails (git appends `"$@"`).
 * @param {string} key @param {string} origin
 */
function refusal(key, origin) {
  const what = `${printable(key)} (${printable(origin)})`;
  return `echo "agent-waypoints: not run: the program that ${what} names - the repository's git configuration does not choose programs for a command that runs without asking; it runs only in a command the user approves" >&2; exit 1; :`;
}

/**
 * Keys that make git run a program, and the value each gets when the repository set it and the
 * user's own configuration does not.
 * @type {ReadonlyArray<{ key: RegExp, off: (key: string, origin: string) => string, when?: (v: string) => boolean }>}
 */
const PROGRAM_KEYS = [
  { key: /^core\.askpass$/, off: () => '' },
  { key: /^core\.sshcommand$/, off: () => 'ssh' },
  { key: /^core\.alternaterefscommand$/, off: refusal },
  { key: /^pager\..+$/, off: () => 'false' },
  { key: /^alias\..+$/, off: (k, o) => `!${refusal(k, o)}` },
  { key: /^filter\..+\.(clean|smudge|process)$/, off: () => '' },
  { key: /^filter\..+\.required$/, off: () => 'false' },
  { key: /^diff\.external$/, off: refusal },
  { key: /^diff\..+\.(command|textconv)$/, off: refusal },
  { key: /^diff\..+\.cachetextconv$/, off: () => 'false' },
  { key: /^merge\..+\.driver$/, off: refusal },
  { key: /^(difftool|mergetool|guitool|browser|man)\..+\.(cmd|path)$/, off: refusal },
  { key: /^interactive\.difffilter$/, off: refusal },
  { key: /^gpg\.(openpgp\.)?program$/, off: () => 'gpg' },
  { key: /^gpg\.x509\.program$/, off: () => 'gpgsm' },
  { key: /^gpg\.ssh\.program$/, off: () => 'ssh-keygen' },
  { key: /^gpg\.ssh\.defaultkeycommand$/, off: refusal },
  { key: /^sendemail\.(.+\.)?(smtpserver|tocmd|cccmd|headercmd)$/, off: refusal },
  { key: /^submodule\..+\.update$/, off: () => 'checkout', when: (v) => v.startsWith('!') },
  { key: /^remote\..+\.uploadpack$/, off: () => 'git-upload-pack' },
  { key: /^remote\..+\.receivepack$/, off: () => 'git-receive-pack' },
  { key: /^protocol\.(.+\.)?allow$/, off: () => 'user' },
  { key: /^hook\..+\.command$/, off: refusal },
];
const CREDENTIAL_HELPER = /^credential\.(.+\.)?helper$/;

/**
 * @typedef {object} Entry
 * @property {string} scope system, global, local, worktree, command …
 * @property {string} origin `file:/home/me/.gitconfig`, `file:.git/config` …
 * @property {string} key Canonical: section and name in lower case, the subsection as written.
 * @property {string | null} value null: a key without `=` (boolean true).
 */

/**
 * `git config --list --show-scope --show-origin -z`: scope NUL origin NUL key [LF value] NUL …
 * @param {string} out
 * @returns {Entry[]}
 */
function parseConfigList(out) {
  const parts = out.split('\0');
  /** @type {Entry[]} */
  const entries = [];
  for (let i = 0; i + 2 < parts.length; i += 3) {
    const kv = /** @type {string} */ (parts[i + 2]);
    const nl = kv.indexOf('\n');
    entries.push({
      scope: /** @type {string} */ (parts[i]),
      origin: /** @type {string} */ (parts[i + 1]),
      key: nl < 0 ? kv : kv.slice(0, nl),
      value: nl < 0 ? null : kv.slice(nl + 1),
    });
  }
  return entries;
}

/**
 * The user's own configuration: system and global scope, from a file outside the workspace (a
 * workspace opened on the home folder holds ~/.gitconfig).
 * @param {Entry} e @param {string} realRoot
 */
function trusted(e, realRoot) {
  if (e.scope !== 'system' && e.scope !== 'global') return false;
  const file = e.origin.startsWith('file:') ? e.origin.slice(5) : null;
  return file !== null && path.isAbsolute(file) && !inside(realRoot, realOr(file));
}

/**
 * The settings that give every program-naming key the repository set back to the user's value or
 * an off value (see the head of this file). Entries of the command scope are ours (ALWAYS).
 * @param {readonly Entry[]} entries
 * @param {string} workspaceRoot
 * @returns {Setting[]}
 */
function programOverrides(entries, workspaceRoot) {
  const realRoot = realOr(path.resolve(workspaceRoot));
  /** @type {Map<string, { rule: (typeof PROGRAM_KEYS)[number], last: Entry, mine: Entry | null }>} */
  const byKey = new Map();
  /** @type {Entry[]} */
  const helpers = [];
  let foreignHelper = false;
  for (const e of entries) {
    if (e.scope === 'command') continue;
    const own = trusted(e, realRoot);
    if (CREDENTIAL_HELPER.test(e.key)) {
      if (own) helpers.push(e);
      else foreignHelper = true;
      continue;
    }
    const seen = byKey.get(e.key);
    const rule = seen?.rule ?? PROGRAM_KEYS.find((r) => r.key.test(e.key));
    if (!rule) continue;
    byKey.set(e.key, { rule, last: e, mine: own ? e : (seen?.mine ?? null) });
  }
  /** @type {Setting[]} */
  const out = [];
  for (const [key, { rule, last, mine }] of byKey) {
    if (trusted(last, realRoot)) continue;
    if (rule.when && !rule.when(last.value ?? '')) continue;
    out.push([key, mine?.value ?? rule.off(key, last.origin)]);
  }
  // The helpers are a list: the empty value clears it, then the user's own go back in order.
  if (foreignHelper)
    out.push(['credential.helper', ''], ...helpers.map((h) => /** @type {Setting} */ ([h.key, h.value ?? ''])));
  return out;
}

/**
 * `env` for a git: the host's GIT_* variables dropped (but who commits), prompts and optional
 * locks off, no git:// proxy command, and `settings` as GIT_CONFIG_*.
 * @param {NodeJS.ProcessEnv} env
 * @param {readonly Setting[]} settings
 * @returns {NodeJS.ProcessEnv}
 */
function gitEnv(env, settings = ALWAYS) {
  /** @type {NodeJS.ProcessEnv} */
  const out = {};
  for (const [k, v] of Object.entries(env)) {
    if ((/^GIT_/i.test(k) && !KEEP_ENV.has(k)) || DROP_ENV.has(k)) continue;
    out[k] = v;
  }
  out.GIT_TERMINAL_PROMPT = '0';
  out.GIT_OPTIONAL_LOCKS = '0';
  out.GIT_PROXY_COMMAND = ''; // set and empty: git uses no core.gitProxy from any file
  out.GIT_CONFIG_COUNT = String(settings.length);
  settings.forEach(([k, v], i) => {
    out[`GIT_CONFIG_KEY_${i}`] = k;
    out[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return out;
}

/**
 * The environment `git` gets in `cwd`: gitEnv with ALWAYS and the overrides for what git's
 * configuration there names. Rejects when the configuration cannot be read (git would not run
 * either), is too large, or names too many programs to override.
 * @param {string} git Absolute path of the git that will run.
 * @param {string} cwd
 * @param {NodeJS.ProcessEnv} env
 * @param {string} workspaceRoot
 * @returns {Promise<NodeJS.ProcessEnv>}
 */
function gitSettings(git, cwd, env, workspaceRoot) {
  return new Promise((resolve, reject) => {
    const opts = { cwd, env: gitEnv(env), maxBuffer: MAX_SCAN_BYTES, timeout: SCAN_TIMEOUT_MS, windowsHide: true };
    execFile(git, CONFIG_SCAN, { ...opts, encoding: 'buffer' }, (err, stdout, stderr) => {
      if (err)
        return reject(new Error(`git could not read its configuration: ${String(stderr).trim() || err.message}`));
      const text = stdout.toString('utf8');
      const overrides = programOverrides(parseConfigList(text), workspaceRoot);
      // A name with bytes that are not UTF-8 cannot be given back to git as it is written.
      const unnamable = !Buffer.from(text, 'utf8').equals(stdout) && overrides.some(([k]) => k.includes('\uFFFD'));
      if (unnamable) return reject(new Error("git's configuration names a program under a name that is not UTF-8"));
      if (overrides.length > MAX_SETTINGS)
        return reject(
          new Error(`git's configuration names ${overrides.length} programs (the limit is ${MAX_SETTINGS})`),
        );
      resolve(gitEnv(env, [...ALWAYS, ...overrides]));
    });
  });
}

module.exports = { ALWAYS, CONFIG_SCAN, gitEnv, gitSettings, parseConfigList, programOverrides };
