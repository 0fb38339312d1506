// The OS sandbox for commands and stdio MCP servers (Linux: bubblewrap, a seccomp filter, a proxy
// for allowed domains). Elsewhere there is none: `unavailable()` says so and callers ask instead.
export { checkSandbox, describeCheck, type SandboxCheck } from './check';
export {
  sandboxedCommandLine,
  SandboxUnavailableError,
  spawnSandboxed,
  unavailable,
  type SandboxCommand,
  type SandboxedCommandLine,
  type SandboxedProcess,
} from './launch';
export { SandboxLayoutError } from './layout';
export {
  COMMAND_POLICY,
  DEFAULT_LIMITS,
  MCP_SERVER_POLICY,
  READ_ONLY_DEFAULTS,
  type SandboxLimits,
  type SandboxPolicy,
  type SandboxProfile,
} from './profile';
export type { RefusedDomain } from './proxy';
export { sandboxSummary, type SandboxReport } from './report';
