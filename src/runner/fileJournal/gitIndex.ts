// Git's index file (`.git/index`), read by us, never written: what git recorded of each tracked
// file — its blob and the stat it had when git last looked (the "stat cache" `git status` compares
// against). Taken before a command (one read of the file), it answers after the command, for the
// few files the command changed, the question `git status` answered before it for the whole tree:
// was this file exactly what git has, so its earlier content is that blob? Git's own rule: the stat
// the file had matches the entry (size, mtime, ctime, inode, a regular file, stage 0), and the entry
// is not "racily clean" (changed within the timestamp of the index's own write). One read and a walk
// of the entries instead of a `git status` that stats the whole tree.
//
// Versions 2, 3 and 4 (prefix-compressed paths), SHA-1 repositories; the trailing checksum verified
// (or zeros: index.skipHash). Anything else — a split index (the `link` extension), a sparse index's
// folder entries, SHA-256, a bad checksum, an unknown version — is refused, and the caller asks
// `git status` instead.
import crypto from 'node:crypto';

const HASH = 20;
const HEADER = 12;
/** ctime, mtime (sec, nsec each), dev, ino, mode, uid, gid, size: ten 32-bit numbers, then the blob id, then flags. */
const FIXED = 40 + HASH + 2;

export interface IndexEntry {
  /** The blob id, hex. */
  blob: string;
  mode: number;
  stage: number;
  ctimeSec: number;
  ctimeNsec: number;
  mtimeSec: number;
  mtimeNsec: number;
  ino: number;
  size: number;
  /** git add -N: in the index without content. */
  intentToAdd: boolean;
}

export interface GitIndex {
  version: number;
  count: number;
  /** The index file's mtime (ns): an entry modified at or after it is racily clean. */
  mtimeNs: bigint;
  /** The `.gitattributes` files the index lists (repository-relative). */
  attributeFiles: readonly string[];
  /** The entries for these paths (repository-relative, '/'-separated); paths not in the index are absent. */
  lookup(paths: readonly string[]): Map<string, IndexEntry>;
}

/** Why an index cannot be read here (the caller falls back to `git status`). */
export class UnsupportedIndex extends Error {}

/** Parses and checks `buf` (the whole index file); throws UnsupportedIndex when it is not one this reads. */
export function readGitIndex(buf: Buffer, mtimeNs: bigint): GitIndex {
  if (buf.length < HEADER + HASH || buf.toString('latin1', 0, 4) !== 'DIRC')
    throw new UnsupportedIndex('not a git index');
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) throw new UnsupportedIndex(`index version ${version}`);
  const count = buf.readUInt32BE(8);
  const body = buf.length - HASH;
  const trailer = buf.subarray(body);
  if (trailer.some((b) => b !== 0) && !crypto.createHash('sha1').update(buf.subarray(0, body)).digest().equals(trailer))
    throw new UnsupportedIndex('its checksum does not match (a SHA-256 repository, or damaged)');
  // One walk to check the structure and find the extensions; lookups walk again, decoding only
  // the names of the lengths asked for.
  const attributeFiles: string[] = [];
  const end = walk(
    buf,
    version,
    count,
    body,
    new Set(),
    () => undefined,
    (name) => attributeFiles.push(name),
  );
  for (let at = end; at < body;) {
    if (at + 8 > body) throw new UnsupportedIndex('an extension is cut short');
    const sig = buf.toString('latin1', at, at + 4);
    if (sig === 'link') throw new UnsupportedIndex('a split index');
    if (sig === 'sdir') throw new UnsupportedIndex('a sparse index');
    at += 8 + buf.readUInt32BE(at + 4);
    if (at > body) throw new UnsupportedIndex(`the ${sig} extension runs past the end`);
  }
  return {
    version,
    count,
    mtimeNs,
    attributeFiles,
    lookup(paths) {
      // Names compared as their UTF-8 bytes, one char per byte.
      const byName = new Map(paths.map((p) => [Buffer.from(p, 'utf8').toString('latin1'), p] as const));
      const lengths = new Set([...byName.keys()].map((n) => n.length));
      const out = new Map<string, IndexEntry>();
      walk(buf, version, count, body, lengths, (at, name) => {
        const p = byName.get(name);
        if (p !== undefined) out.set(p, entryAt(buf, at, version));
      });
      return out;
    },
  };
}

/**
 * Walks the entries; for each whose name is one of `lengths` bytes long, calls `each` with the entry's
 * offset and its name (latin1: one char per byte). Returns where the entries end.
 */
function walk(
  buf: Buffer,
  version: number,
  count: number,
  body: number,
  lengths: ReadonlySet<number>,
  each: (start: number, name: string) => void,
  attributes?: (name: string) => void,
): number {
  let at = HEADER;
  // Version 4: the previous name, rebuilt in place (its first `len` bytes).
  let name = Buffer.allocUnsafe(4096);
  let len = 0;
  for (let i = 0; i < count; i++) {
    const start = at;
    if (start + FIXED > body) throw new UnsupportedIndex('an entry is cut short');
    if ((buf.readUInt32BE(start + 24) & 0o170000) === 0o040000) throw new UnsupportedIndex('a sparse index');
    const flags = buf.readUInt16BE(start + 40 + HASH);
    const extended = version >= 3 && (flags & 0x4000) !== 0;
    let nameAt = start + FIXED + (extended ? 2 : 0);
    if (version === 4) {
      // How many bytes of the previous name to drop (git's offset varint), then the rest, NUL-ended.
      if (nameAt >= body) throw new UnsupportedIndex('an entry name is cut short');
      let c = buf[nameAt++]!;
      let drop = c & 0x7f;
      while (c & 0x80) {
        if (nameAt >= body || drop > 0xffffff) throw new UnsupportedIndex('an entry name is cut short');
        c = buf[nameAt++]!;
        drop = ((drop + 1) << 7) | (c & 0x7f);
      }
      if (drop > len) throw new UnsupportedIndex('an entry name drops more than the previous one has');
      const nul = buf.indexOf(0, nameAt);
      if (nul < 0 || nul >= body) throw new UnsupportedIndex('an entry name is not ended');
      const keep = len - drop;
      len = keep + (nul - nameAt);
      if (len > name.length) {
        const bigger = Buffer.allocUnsafe(Math.max(len, name.length * 2));
        name.copy(bigger, 0, 0, keep);
        name = bigger;
      }
      buf.copy(name, keep, nameAt, nul);
      at = nul + 1;
      if (lengths.has(len)) each(start, name.toString('latin1', 0, len));
      if (attributes && isAttributes(name, 0, len)) attributes(name.toString('utf8', 0, len));
    } else {
      // The name's length is in the flags (0xfff: that long or longer); a NUL ends it.
      const short = flags & 0xfff;
      const nul = short < 0xfff && buf[nameAt + short] === 0 ? nameAt + short : buf.indexOf(0, nameAt);
      if (nul < 0 || nul >= body) throw new UnsupportedIndex('an entry name is not ended');
      // The entry is padded with 1–8 NULs to a multiple of 8 bytes.
      at = start + ((nul - start + 8) & ~7);
      if (at > body) throw new UnsupportedIndex('an entry is cut short');
      if (lengths.has(nul - nameAt)) each(start, buf.toString('latin1', nameAt, nul));
      if (attributes && isAttributes(buf, nameAt, nul)) attributes(buf.toString('utf8', nameAt, nul));
    }
  }
  return at;
}

const ATTRIBUTES = Buffer.from('.gitattributes', 'latin1');

/** `.gitattributes`, or a name ending in `/.gitattributes` — compared from the end, so most names differ at once. */
function isAttributes(b: Buffer, from: number, to: number): boolean {
  const n = ATTRIBUTES.length;
  if (to - from < n) return false;
  for (let i = 1; i <= n; i++) if (b[to - i] !== ATTRIBUTES[n - i]) return false;
  return to - from === n || b[to - n - 1] === 0x2f;
}

function entryAt(buf: Buffer, at: number, version: number): IndexEntry {
  const u = (k: number) => buf.readUInt32BE(at + 4 * k);
  const flags = buf.readUInt16BE(at + 40 + HASH);
  const extended = version >= 3 && (flags & 0x4000) !== 0;
  return {
    ctimeSec: u(0),
    ctimeNsec: u(1),
    mtimeSec: u(2),
    mtimeNsec: u(3),
    ino: u(5),
    mode: u(6),
    size: u(9),
    blob: buf.toString('hex', at + 40, at + 40 + HASH),
    stage: (flags >> 12) & 3,
    intentToAdd: extended && (buf.readUInt16BE(at + FIXED) & 0x2000) !== 0,
  };
}
