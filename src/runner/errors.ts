// Errors the runner raises to its callers (the extension's commands show their messages).

/** Resume would continue under different conditions than the run started with: ask the user first. */
export class ResumeNeedsConfirmationError extends Error {
  override name = 'ResumeNeedsConfirmationError';
  constructor(
    readonly runId: string,
    /** Sentences for the user, e.g. "the extension was updated from 0.1.0 to 0.2.0". */
    readonly reasons: string[],
  ) {
    super(`Resuming run ${runId} needs your confirmation: ${reasons.join('; ')}.`);
  }
}

/** A decision for an approval that is no longer pending, or whose arguments changed since it was shown. */
export class StaleApprovalError extends Error {
  override name = 'StaleApprovalError';
  constructor(
    readonly runId: string,
    readonly toolCallId: string,
    why: string,
  ) {
    super(`Approval ${toolCallId} of run ${runId} cannot be decided: ${why}.`);
  }
}

/** Edited arguments that are not valid JSON or do not match the tool's schema. */
export class InvalidEditedArgumentsError extends Error {
  override name = 'InvalidEditedArgumentsError';
}

export { errorMessage } from '../common/errors';
