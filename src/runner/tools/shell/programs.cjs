// @ts-check
// Which file a bare program name runs. The workspace is not trusted to choose it: PATH entries that
// are empty or relative (they mean the current folder — the workspace) and entries inside the
// workspace are skipped, compared as real paths, and so is a program whose real file lies in the
// workspace — so a `git` the repository carries (`./git`, `node_modules/.bin/git`) never runs for
// `git`. One module for the project's own git (runner/fileJournal/git.ts) and the argv runner (the
// programs of a line the allow list let through): plain CommonJS because the argv runner loads it
// beside itself, without a bundler.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/**
 * @typedef {object} Lookup
 * @property {NodeJS.ProcessEnv} env PATH as the host sees it.
 * @property {string} workspaceRoot
 * @property {NodeJS.Platform} [platform]
 */

/** @param {string} p */
function realOr(p) {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return p;
  }
}

/** @param {string} parent @param {string} child */
function inside(parent, child) {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel));
}

/** @param {Lookup} o */
function isWindows(o) {
  return (o.platform ?? process.platform) === 'win32';
}

/** @param {Lookup} o @returns {string} */
function pathVar(o) {
  const win = isWindows(o);
  const hit = Object.entries(o.env).find(([k]) => (win ? k.toUpperCase() === 'PATH' : k === 'PATH'));
  return hit?.[1] ?? '';
}

/**
 * PATH's entries split into those a program may come from (absolute, outside the workspace) and
 * the ones skipped, in order.
 * @param {Lookup} o
 * @returns {{ trusted: string[], skipped: string[] }}
 */
function pathEntries(o) {
  const win = isWindows(o);
  const root = realOr(path.resolve(o.workspaceRoot));
  const isAbs = win ? path.win32.isAbsolute : path.posix.isAbsolute;
  /** @type {{ trusted: string[], skipped: string[] }} */
  const out = { trusted: [], skipped: [] };
  for (const raw of pathVar(o).split(win ? ';' : ':')) {
    const dir = raw.replace(/^"(.*)"$/, '$1'); // Windows PATH entries may be quoted
    if (dir === '') continue;
    if (!isAbs(dir) || inside(root, realOr(dir))) out.skipped.push(dir);
    else out.trusted.push(dir);
  }
  return out;
}

/**
 * PATH for the programs of a line the allow list let through: its trusted entries only, so what
 * they start by name (git's ssh, npm's node …) is not the workspace's either.
 * @param {Lookup} o
 */
function trustedPath(o) {
  return pathEntries(o).trusted.join(isWindows(o) ? ';' : ':');
}

/** @param {string} file @param {boolean} win */
function isProgram(file, win) {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (!win) fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The absolute path of the program `file` (a name: `git`, `git.exe`) from the trusted PATH entries,
 * or null. A program that is a link into the workspace is passed over like a workspace folder.
 * @param {string} file
 * @param {Lookup} o
 * @returns {string | null}
 */
function findProgram(file, o) {
  const win = isWindows(o);
  const root = realOr(path.resolve(o.workspaceRoot));
  for (const dir of pathEntries(o).trusted) {
    const exe = path.join(dir, file);
    if (isProgram(exe, win) && !inside(root, realOr(exe))) return exe;
  }
  return null;
}

/**
 * Where PATH would have found `file` had its skipped entries counted (for the message when it is
 * not found); null when nowhere.
 * @param {string} file
 * @param {Lookup} o
 * @returns {string | null}
 */
function skippedProgram(file, o) {
  const win = isWindows(o);
  for (const dir of pathEntries(o).skipped) {
    const exe = path.join(dir, file);
    if (isProgram(exe, win)) return exe;
  }
  const root = realOr(path.resolve(o.workspaceRoot));
  for (const dir of pathEntries(o).trusted) {
    const exe = path.join(dir, file);
    if (isProgram(exe, win) && inside(root, realOr(exe))) return exe;
  }
  return null;
}

module.exports = { findProgram, skippedProgram, trustedPath, inside, realOr };
