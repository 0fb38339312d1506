// Where the API key may go. A stored key is bound to the origin (scheme, host,
// port) of the base URL it was entered for. A request to any other origin carries the key only
// after the user said so for that origin — whether the base URL came from a workspace's settings
// (a repository can redirect it) or from the user's own. vscode-free: the question itself and
// where the answers are kept live in src/models/apiKeys.ts.

/** The key as stored in SecretStorage: the key and the origin it was entered for. */
export interface StoredKey {
  key: string;
  origin: string;
}

export type KeyGrant = 'allow' | 'deny';

/** Where the base URL setting comes from (VS Code's `inspect()`): the user's own settings or a workspace's. */
export type BaseUrlSource = 'default' | 'user' | 'workspace' | 'folder';

/** scheme://host:port of a URL (default ports left out, as browsers do); null for anything else. */
export function originOf(url: string): string | null {
  try {
    const u = new URL(url);
    return u.origin === 'null' ? null : u.origin;
  } catch {
    return null;
  }
}

/** SecretStorage holds `{"key","origin"}`; a bare string is a key stored before keys had an origin. */
export function parseStoredKey(raw: string | undefined, legacyOrigin: string | null): StoredKey | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw.startsWith('{')) {
    try {
      const v = JSON.parse(raw) as Partial<StoredKey>;
      if (typeof v.key === 'string' && v.key !== '' && typeof v.origin === 'string')
        return { key: v.key, origin: v.origin };
    } catch {
      // not our JSON: a key that starts with "{"
    }
  }
  return legacyOrigin === null ? undefined : { key: raw, origin: legacyOrigin };
}

export function serializeStoredKey(k: StoredKey): string {
  return JSON.stringify({ key: k.key, origin: k.origin });
}

export type KeyRoute =
  | { kind: 'send' }
  /** Not decided yet for this origin: ask the user. */
  | { kind: 'ask'; target: string }
  | { kind: 'withhold'; why: string };

/** Whether the key entered for `key.origin` goes to `baseUrl`, given the user's remembered answers. */
export function keyRoute(key: StoredKey, baseUrl: string, grants: Readonly<Record<string, KeyGrant>>): KeyRoute {
  const target = originOf(baseUrl);
  if (target === null) return { kind: 'withhold', why: 'the base URL is not a valid http(s) URL' };
  if (target === key.origin) return { kind: 'send' };
  const grant = Object.hasOwn(grants, target) ? grants[target] : undefined;
  if (grant === 'allow') return { kind: 'send' };
  if (grant === 'deny') return { kind: 'withhold', why: `you chose not to send your API key to ${target}` };
  return { kind: 'ask', target };
}

export interface KeyQuestion {
  /** The origin that would receive the key. */
  target: string;
  /** The origin the key was entered for. */
  entered: string;
  source: BaseUrlSource;
  /** The modal's message and detail. */
  message: string;
  detail: string;
}

/** The words of the question, by where the base URL comes from. */
export function keyQuestion(o: {
  target: string;
  entered: string;
  source: BaseUrlSource;
  baseUrl: string;
  userBaseUrl: string;
}): KeyQuestion {
  const fromWorkspace = o.source === 'workspace' || o.source === 'folder';
  const message = fromWorkspace
    ? `This workspace sends your API key to ${o.target} — allow?`
    : `Send your API key to ${o.target}?`;
  const where = fromWorkspace
    ? `This workspace's settings set agentWaypoints.provider.baseUrl to ${o.baseUrl} (yours: ${o.userBaseUrl}).`
    : `Your settings now name ${o.baseUrl}.`;
  const detail =
    `Your API key was entered for ${o.entered}. ${where} ` +
    `Allow sends it to ${o.target} from now on; Don’t Send makes requests there without it. ` +
    'Change your mind with “Agent Waypoints: Forget where the API key may go…”.';
  return { target: o.target, entered: o.entered, source: o.source, message, detail };
}
