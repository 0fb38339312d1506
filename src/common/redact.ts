// Credentials out of anything shown, logged or stored: a user name or password inside a URL
// (`https://user:pass@host`), secret query parameters (`?api-key=…`, `&token=…`, `&sig=…`) and
// known secrets (the API key) become `***`. The one scrub for error texts, logs, checkpoints and
// the run view. Linear scans, no backtracking regex: texts can be a server's whole error body.

const SECRET_PARAMS = new Set([
  'api-key',
  'api_key',
  'apikey',
  'x-api-key',
  'key',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'auth',
  'authorization',
  'password',
  'passwd',
  'pwd',
  'secret',
  'client_secret',
  'sig',
  'signature',
  'code',
]);

const MASK = '***';

/** `text` with URL credentials, secret query parameters and each of `secrets` (4+ characters) masked. */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined | null> = []): string {
  let out = maskSecretParams(maskUserinfo(text));
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join(MASK);
  return out;
}

/** A URL as it may be shown: the same scrub (kept apart in name: callers say what they hold). */
export function redactUrl(url: string): string {
  return redactSecrets(url);
}

/** `scheme://user:pass@host` → `scheme://***@host`, wherever `://` occurs. */
function maskUserinfo(text: string): string {
  let out = '';
  let copied = 0;
  // An authority ends at its first '/', so the next '://' starts no earlier than that: one pass.
  for (let at = text.indexOf('://'); at >= 0;) {
    const start = at + 3;
    let end = start;
    let lastAt = -1; // the userinfo is whatever precedes the authority's last '@' (a password may hold one)
    for (; end < text.length && !AUTHORITY_END.has(text[end]!) && !isSpace(text[end]!); end++)
      if (text[end] === '@') lastAt = end;
    if (lastAt >= start) {
      out += text.slice(copied, start) + MASK;
      copied = lastAt;
    }
    at = text.indexOf('://', Math.max(start, end - 1));
  }
  return out + text.slice(copied);
}

const AUTHORITY_END = new Set(['/', '?', '#', '"', "'", '<', '>', '`']);
const isSpace = (c: string): boolean => c === ' ' || c === '\n' || c === '\r' || c === '\t';

/** `?api-key=abc&x=1` → `?api-key=***&x=1`: a parameter whose name says it is a secret. */
function maskSecretParams(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== '?' && c !== '&' && c !== ';') continue;
    let eq = i + 1;
    while (eq < text.length && eq - i <= 64 && isNameChar(text[eq]!)) eq++;
    if (text[eq] !== '=' || !SECRET_PARAMS.has(text.slice(i + 1, eq).toLowerCase())) continue;
    let end = eq + 1;
    while (end < text.length && !VALUE_END.has(text[end]!) && !isSpace(text[end]!)) end++;
    if (end > eq + 1) {
      out += text.slice(from, eq + 1) + MASK;
      from = end;
    }
    i = end - 1;
  }
  return out + text.slice(from);
}

const VALUE_END = new Set(['&', '#', ';', '"', "'", '<', '>', '`', ')']);

function isNameChar(c: string): boolean {
  return /[A-Za-z0-9_.-]/.test(c);
}
