// The shape every workspace path that is *stored* must have (file journal, restore records,
// exports): relative to the workspace root, '/'-separated, no '.' or '..' segments, not absolute,
// no NUL. Checked where stored paths come in (import) and before a stored path is used (restore,
// through paths.ts): stored data can come from anywhere, so a path in it is never joined blindly.

/** Why `p` is not a plain stored relative path, or null when it is. */
export function storedPathProblem(p: unknown): string | null {
  if (typeof p !== 'string' || p === '') return 'it is empty';
  if (p.includes('\0')) return 'it contains a NUL byte';
  if (p.startsWith('/') || p.startsWith('\\') || /^[A-Za-z]:/.test(p)) return 'it is an absolute path';
  // Backslashes are separators on Windows: a segment is judged by either separator.
  for (const segment of p.split(/[\\/]/)) {
    if (segment === '..') return 'it climbs out with ..';
    if (segment === '' || segment === '.') return 'it is not a plain relative path';
  }
  return null;
}
