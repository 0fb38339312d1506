// Types of gitHardening.cjs (plain CommonJS, loaded by the argv runner without a bundler).
export type Setting = [key: string, value: string];
export interface Entry {
  scope: string;
  origin: string;
  key: string;
  value: string | null;
}
export const ALWAYS: readonly Setting[];
export const CONFIG_SCAN: readonly string[];
export function gitEnv(env: NodeJS.ProcessEnv, settings?: readonly Setting[]): NodeJS.ProcessEnv;
export function gitSettings(
  git: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  workspaceRoot: string,
): Promise<NodeJS.ProcessEnv>;
export function parseConfigList(out: string): Entry[];
export function programOverrides(entries: readonly Entry[], workspaceRoot: string): Setting[];
