// How the workspace's files are listed and searched: one interface, two engines — ripgrep (the
// binary VS Code ships) and a pure-Node fallback — that give the same answers: same files, same
// order (depth-first, names sorted byte-wise, as `rg --sort path`), same ignore rules (.gitignore
// inside git repositories, .ignore/.rgignore anywhere, .git/info/exclude, exclude globs).

export type EngineName = 'ripgrep' | 'node';

/** Limits; mutable for tests only. */
export const fileLimits = {
  /** Files one listing (or one fallback search) walks before it stops and says so. */
  maxFiles: 200_000,
  /** How long one search may take before it stops and says so. */
  deadlineMs: 20_000,
};

export interface Scope {
  /** Real path of the workspace root (symlinks resolved). */
  root: string;
  /** Folder or file to walk, relative to root, '/'-separated; '.' for the root. */
  rel: string;
  /** Exclude globs in gitignore syntax anchored at root (see excludes.ts). */
  excludes: readonly string[];
  signal: AbortSignal;
}

export interface FileList {
  /** Paths relative to root, in walk order. */
  files: string[];
  /** False when the walk stopped at its file limit or its deadline. */
  complete: boolean;
  /** What ended an incomplete listing. */
  stoppedBy: 'limit' | 'deadline' | null;
}

/** Bounds of one listing (the file journal's scan sets its own; the tools use `fileLimits`). */
export interface ListLimits {
  /** Default: `fileLimits.maxFiles`. */
  maxFiles?: number;
  /** Epoch ms; the listing stops there, incomplete. Default: none. */
  deadline?: number | null;
}

/** Longer lines reach the tool as a window around the match (the display shows 300 characters of it). */
export const MAX_POSTED_LINE = 4000;

export interface SearchQuery {
  /** Validated as a JavaScript regular expression by the caller. */
  pattern: string;
  caseSensitive: boolean;
  /** Only files whose relative path passes (the tool's `glob` argument). */
  filter: ((rel: string) => boolean) | null;
  /** A glob on file names alone that `filter` implies; lets ripgrep skip other files early. */
  nameGlob: string | null;
  /** Matching lines to skip (paging), then how many to return. */
  offset: number;
  limit: number;
  /**
   * Set: files with more than one name (hard links) are left out, and named here — one of their
   * other names may be a secret file, inside the workspace or outside it. Paging counts without them.
   */
  onLinked?: ((rel: string) => void) | null;
}

export interface Hit {
  rel: string;
  /** 1-based. */
  line: number;
  /** The line (without its line ending), or a slice of it that covers the display window. */
  text: string;
  /** Where `text` starts in the line, in UTF-16 units. */
  textStart: number;
  /** Length of the whole line, in UTF-16 units. */
  lineLength: number;
  /** Start of the first match in the line, in UTF-16 units. */
  column: number;
}

export type SearchStop =
  | { kind: 'deadline'; searchedFiles: number | null; totalFiles: number | null; currentFile: string | null }
  | { kind: 'walk_limit'; walkedFiles: number };

export interface SearchResult {
  /** Up to `limit` hits after skipping `offset`. */
  hits: Hit[];
  /** At least one more matching line exists after these. */
  more: boolean;
  /** Why the search ended before it had looked at every file, if it did. */
  stopped: SearchStop | null;
  /** Problems reported along the way (unreadable files, bad ignore files); the results may miss those files. */
  warnings: string[];
}

export interface FileFinder {
  /** The engine the next call will use. */
  readonly engine: EngineName;
  /** Calls answered by each engine (the in-host test checks that ripgrep did the work). */
  readonly calls: Readonly<Record<EngineName, number>>;
  /** Exclude globs (VS Code syntax, from files.exclude / search.exclude) as of now. */
  excludes(): readonly string[];
  list(scope: Scope, limits?: ListLimits): Promise<FileList>;
  search(scope: Scope, query: SearchQuery): Promise<SearchResult>;
}
