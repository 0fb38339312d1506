// The shape of the protected and secret file rules (protectedFiles.ts holds the rules and their
// judgement). A leaf of its own: the sandbox's profile names these rules, and the tools' context
// names the sandbox, so the shape cannot live beside the judgement that reads paths.
import type { Glob } from './glob';

export interface FileRule {
  glob: Glob;
  /** Why a write or read of such a file asks, completing "… is a protected file: <why>". */
  why: string;
}

export interface FileRules {
  /** Writes ask. */
  protect: readonly FileRule[];
  /** Reads ask (read_file), and search_text leaves them out. */
  secrets: readonly FileRule[];
  /** Secret-looking names that are templates without secrets (`.env.example`). */
  notSecret: readonly Glob[];
}
