// Picks the engine: ripgrep when the host found its binary, the pure-Node walk otherwise — and
// for good if the binary turns out not to start (the answer is the same, only slower).
import { nodeList, nodeSearch } from './nodeEngine';
import { ripgrepList, ripgrepSearch, RipgrepUnavailable } from './ripgrepEngine';
import { DEFAULT_EXCLUDES } from './excludes';
import type { EngineName, FileFinder, FileList, ListLimits, Scope, SearchQuery, SearchResult } from './types';

export interface FileFinderOptions {
  /** Absolute path of a ripgrep binary (VS Code's, from src/ripgrepPath.ts); null or absent → Node. */
  ripgrepPath?: string | null;
  /** files.exclude + search.exclude globs (VS Code syntax), read at every call. Default: VS Code's defaults. */
  excludes?: () => readonly string[];
  /** Told once when the ripgrep binary fails to start and the finder falls back. */
  onFallback?: (reason: string) => void;
}

export function createFileFinder(opts: FileFinderOptions = {}): FileFinder {
  return new EngineSwitch(opts);
}

class EngineSwitch implements FileFinder {
  private rg: string | null;
  readonly calls: Record<EngineName, number> = { ripgrep: 0, node: 0 };

  constructor(private readonly opts: FileFinderOptions) {
    this.rg = opts.ripgrepPath ?? null;
  }

  get engine(): EngineName {
    return this.rg === null ? 'node' : 'ripgrep';
  }

  excludes(): readonly string[] {
    return this.opts.excludes?.() ?? DEFAULT_EXCLUDES;
  }

  list(scope: Scope, limits: ListLimits = {}): Promise<FileList> {
    return this.use(
      (rg) => ripgrepList(rg, scope, limits),
      () => nodeList(scope, limits),
    );
  }

  search(scope: Scope, query: SearchQuery): Promise<SearchResult> {
    return this.use(
      (rg) => ripgrepSearch(rg, scope, query),
      () => nodeSearch(scope, query),
    );
  }

  private async use<T>(withRipgrep: (rg: string) => Promise<T>, withNode: () => Promise<T>): Promise<T> {
    if (this.rg !== null) {
      try {
        const r = await withRipgrep(this.rg);
        this.calls.ripgrep++;
        return r;
      } catch (e) {
        if (!(e instanceof RipgrepUnavailable)) throw e;
        this.rg = null;
        this.opts.onFallback?.(e.message);
      }
    }
    const r = await withNode();
    this.calls.node++;
    return r;
  }
}
