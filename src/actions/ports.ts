// What the actions need from the editor, as small interfaces: the extension implements them with
// VS Code (views/notices.ts, views/restore/editor.ts, the root's run views), the unit tests with
// scripted answers. The actions decide what to say and when; the editor only shows it.
import type { StartedRun } from '../runner/runner';
import type { RestoreRecord } from '../store/api/schema';
import type { RestorePlan } from './restore/plan';

/** One choice of a question (a quick pick item). */
export interface Choice<T> {
  label: string;
  detail?: string;
  value: T;
}

/** How an action speaks to the user: notifications, a modal question, a choice, a line of input. */
export interface Notices {
  /** A notification; resolves to the button clicked, undefined when dismissed. */
  info<B extends string>(text: string, ...buttons: B[]): Promise<B | undefined>;
  warn<B extends string>(text: string, ...buttons: B[]): Promise<B | undefined>;
  error(text: string): void;
  /** A modal question with a detail; resolves to the button, undefined when cancelled. */
  confirm<B extends string>(text: string, detail: string, ...buttons: B[]): Promise<B | undefined>;
  /** One of several choices; undefined when dismissed. */
  choose<T>(choices: readonly Choice<T>[], o: { title: string; placeHolder: string }): Promise<T | undefined>;
  /** A line of text; `validate` returns why a value is not accepted. Undefined when dismissed. */
  input(o: {
    title: string;
    prompt: string;
    value: string;
    validate(value: string): string | undefined;
  }): Promise<string | undefined>;
}

/** The log the actions write to (the output channel). */
export interface ActionLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** What a restore needs from the editor: its unsaved editors, the preview, the record as a document. */
export interface RestoreEditor {
  /** Workspace files open with unsaved changes (relative, '/'-separated): planned as conflicts, never written by default. */
  dirtyPaths(): ReadonlySet<string>;
  /** Shows the plan, file by file; resolves to the ticked paths, undefined when dismissed. */
  preview(plan: RestorePlan, o: { runId: string; title: string }): Promise<ReadonlySet<string> | undefined>;
  /** The record, every file and why, as a read-only document (`beside`: next to the run view). */
  showDetails(record: RestoreRecord, o?: { beside?: boolean }): Promise<void>;
}

/** Where to open a run: its end (default), its first pending approval, or a step. */
export type OpenAt = { kind: 'end' } | { kind: 'firstPending' } | { kind: 'step'; step: number };

/** The run views and the session display, as the resume and fork actions use them. */
export interface RunViews {
  show(runId: string, at?: OpenAt): Promise<unknown>;
  /** A run started or resumed here: its view, and the status bar until its first event. */
  track(run: StartedRun, title: string): void;
  /** A checkpoint as a read-only document (a run another window holds can still be read). */
  openCheckpoint(runId: string, seq: number): Promise<unknown>;
}
