// Types of programs.cjs (plain CommonJS, loaded by the argv runner without a bundler).
export interface Lookup {
  /** PATH as the host sees it. */
  env: NodeJS.ProcessEnv;
  workspaceRoot: string;
  platform?: NodeJS.Platform;
}
export function findProgram(file: string, o: Lookup): string | null;
export function skippedProgram(file: string, o: Lookup): string | null;
export function trustedPath(o: Lookup): string;
export function inside(parent: string, child: string): boolean;
export function realOr(p: string): string;
