// Errors the store raises. Every message names the run and, where there is one, the file.

/** A checkpoint is missing, malformed or fails its checksum. Never read as empty data. */
export class AgentCheckpointCorruptionError extends Error {
  override name = 'AgentCheckpointCorruptionError';
  constructor(
    message: string,
    readonly runId: string | null,
    readonly file: string | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** No checkpoint (or no run) where one was expected: a resume of a run that never persisted. */
export class CheckpointNotFoundError extends AgentCheckpointCorruptionError {
  override name = 'CheckpointNotFoundError';
}

/** A file of another version than this one reads (a newer one, or one older than any migration): refused, never rewritten. */
export class SchemaVersionError extends Error {
  override name = 'SchemaVersionError';
  constructor(
    readonly file: string,
    readonly found: number,
    readonly supported: number,
  ) {
    super(
      found > supported
        ? `${file} has schema_version ${found}, newer than this version of Agent Waypoints supports (${supported}). ` +
            'Update the extension to open it; the file was left untouched.'
        : `${file} has schema_version ${found}, which this version of Agent Waypoints does not read (it reads ${supported}). ` +
            'The file was left untouched.',
    );
  }
}

/** Another live window owns the run. */
export class RunLockedError extends Error {
  override name = 'RunLockedError';
  constructor(
    readonly runId: string,
    readonly holder: { label: string; pid: number; hostname: string },
  ) {
    super(
      `Run ${runId} is held by ${holder.label} (pid ${holder.pid} on ${holder.hostname}); it can be viewed read-only.`,
    );
  }
}

/** A write to a run this store does not hold the lease for (never acquired, released, or taken over). */
export class RunNotOwnedError extends Error {
  override name = 'RunNotOwnedError';
  constructor(readonly runId: string) {
    super(`This window does not own run ${runId}; acquire it before writing.`);
  }
}

/** A write failed (disk full, permissions, I/O). Nothing acknowledged was lost; the run pauses. */
export class StoreWriteError extends Error {
  override name = 'StoreWriteError';
  constructor(
    message: string,
    readonly runId: string | null,
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A run id or other key that fails validation (would escape the store folder, etc.). */
export class InvalidKeyError extends Error {
  override name = 'InvalidKeyError';
}

/** Malformed input to a store call (a caller bug): the message says which field and why. */
export class InvalidInputError extends Error {
  override name = 'InvalidInputError';
}

/**
 * A write that contradicts what the run already holds: deciding an approval that is not pending
 * (stale id, replayed decision), a second result for an effect, a result without an intent.
 */
export class StoreConflictError extends Error {
  override name = 'StoreConflictError';
  constructor(
    message: string,
    readonly runId: string,
  ) {
    super(message);
  }
}

/** The store was closed; no further calls. */
export class StoreClosedError extends Error {
  override name = 'StoreClosedError';
  constructor() {
    super('The checkpoint store is closed.');
  }
}
