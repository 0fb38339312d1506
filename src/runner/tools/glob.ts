// A small glob matcher (no dependency): `*`, `?`, `**`, `{a,b}`, `[abc]`. A pattern without "/"
// matches the file's base name anywhere (like ripgrep's -g "*.ts"); with "/" the relative path.

export function globToRegExp(glob: string): RegExp {
  let re = '';
  let inBraces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        // `**/` matches zero or more directories; a trailing `**` matches anything.
        const slash = glob[i + 2] === '/';
        re += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '{') {
      inBraces++;
      re += '(?:';
    } else if (c === '}' && inBraces > 0) {
      inBraces--;
      re += ')';
    } else if (c === ',' && inBraces > 0) re += '|';
    else if (c === '[') {
      const close = glob.indexOf(']', i + 1);
      if (close === -1) re += '\\[';
      else {
        const body = glob.slice(i + 1, close).replace(/^!/, '^').replace(/\\/g, '\\\\');
        re += `[${body}]`;
        i = close;
      }
    } else re += /[.+^$()|\\]/.test(c) ? `\\${c}` : c;
  }
  return new RegExp(`^${re}$`);
}

export function makeGlobMatcher(glob: string): (relPath: string) => boolean {
  const re = globToRegExp(glob.replace(/^\.\//, ''));
  const onBase = !glob.includes('/');
  return (relPath) => re.test(onBase ? relPath.slice(relPath.lastIndexOf('/') + 1) : relPath);
}
