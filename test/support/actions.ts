// The product's actions (src/actions createActions) with scripted ports in place of VS Code: a user
// who answers notifications and questions as the test says (dismissing anything else), presses
// Enter on the restore preview (its default ticks) unless told otherwise, and run views that
// record what they were asked to show. The unit tests and the benchmark build actions this way.
import { createActions, type Actions, type ActionsDeps } from '../../src/actions';
import type { Choice, Notices, OpenAt, RestoreEditor, RunViews } from '../../src/actions/ports';
import { fsRestoreWriter, type RestoreWriter } from '../../src/actions/restore/files';
import { defaultTicks, type RestorePlan } from '../../src/actions/restore/plan';
import type { DecidedBy, RestoreRecord } from '../../src/store/api/schema';
import type { CheckpointStore, OwnerInfo } from '../../src/store/api/types';
import type { RunViewEditor } from '../../src/views/run/actionRequests';
import type { RunViewDeps } from '../../src/views/run/controller';
import { Emitter } from '../../src/common/emitter';
import type { RunnerEvent } from '../../src/runner/events';

/** What the scripted user was told or asked, in order: `info: …`, `warn: …`, `error: …`, `confirm: …`, `choose: <title>`, `input: <title>`. */
export type Said = `${'info' | 'warn' | 'error' | 'confirm' | 'choose' | 'input'}: ${string}`;

export class ScriptedNotices implements Notices {
  readonly said: Said[] = [];
  /** [what the text or title matches, the button / choice label / input value to answer]: the first match answers, once. */
  readonly answers: [RegExp, string][] = [];

  /** Answers the next question or notification whose text (or title) matches, once. */
  answer(when: RegExp, reply: string): this {
    this.answers.push([when, reply]);
    return this;
  }

  async info<B extends string>(text: string, ...buttons: B[]): Promise<B | undefined> {
    return this.button('info', text, buttons);
  }

  async warn<B extends string>(text: string, ...buttons: B[]): Promise<B | undefined> {
    return this.button('warn', text, buttons);
  }

  error(text: string): void {
    this.said.push(`error: ${text}`);
  }

  async confirm<B extends string>(text: string, _detail: string, ...buttons: B[]): Promise<B | undefined> {
    return this.button('confirm', text, buttons);
  }

  async choose<T>(choices: readonly Choice<T>[], o: { title: string }): Promise<T | undefined> {
    this.said.push(`choose: ${o.title}`);
    const reply = this.reply(o.title);
    return choices.find((c) => c.label === reply)?.value;
  }

  async input(o: { title: string; validate(v: string): string | undefined }): Promise<string | undefined> {
    this.said.push(`input: ${o.title}`);
    const reply = this.reply(o.title);
    return reply !== undefined && o.validate(reply) === undefined ? reply : undefined;
  }

  private button<B extends string>(kind: 'info' | 'warn' | 'confirm', text: string, buttons: B[]): B | undefined {
    this.said.push(`${kind}: ${text}`);
    const reply = this.reply(text);
    return buttons.find((b) => b === reply);
  }

  private reply(text: string): string | undefined {
    const i = this.answers.findIndex(([re]) => re.test(text));
    return i === -1 ? undefined : this.answers.splice(i, 1)[0]![1];
  }
}

export class ScriptedRestoreEditor implements RestoreEditor {
  readonly dirty = new Set<string>();
  readonly previews: RestorePlan[] = [];
  readonly details: RestoreRecord[] = [];
  /** The preview's answer: the default ticks (Enter), unless a test sets another. */
  ticks: (plan: RestorePlan) => ReadonlySet<string> | undefined = (plan) => defaultTicks(plan);

  dirtyPaths(): ReadonlySet<string> {
    return this.dirty;
  }

  async preview(plan: RestorePlan): Promise<ReadonlySet<string> | undefined> {
    this.previews.push(plan);
    return this.ticks(plan);
  }

  async showDetails(record: RestoreRecord): Promise<void> {
    this.details.push(record);
  }
}

export class RecordedViews implements RunViews {
  readonly shown: [string, OpenAt | undefined][] = [];
  readonly tracked: string[] = [];
  readonly checkpoints: [string, number][] = [];

  async show(runId: string, at?: OpenAt): Promise<void> {
    this.shown.push([runId, at]);
  }

  track(run: { runId: string }): void {
    this.tracked.push(run.runId);
  }

  async openCheckpoint(runId: string, seq: number): Promise<void> {
    this.checkpoints.push([runId, seq]);
  }
}

export interface TestActions {
  actions: Actions;
  notices: ScriptedNotices;
  editor: ScriptedRestoreEditor;
  views: RecordedViews;
  logged: string[];
}

/** The product's actions over `store` and `runner` in `workspace`, with scripted ports. */
export function testActions(o: {
  store: CheckpointStore;
  runner: ActionsDeps['runner'];
  workspace: string;
  owner: OwnerInfo;
  storageDir?: string;
  trusted?: () => boolean;
  allowTool?: (toolName: string) => Promise<string>;
  allowDomains?: (domains: readonly string[]) => Promise<void>;
  maxSteps?: number;
  /** Who decides and hands off (default: this user on this machine). */
  by?: DecidedBy;
  /** Wraps the product's writer (a fault on one write); default: the product's. */
  writer?: (product: RestoreWriter) => RestoreWriter;
}): TestActions {
  const notices = new ScriptedNotices();
  const editor = new ScriptedRestoreEditor();
  const views = new RecordedViews();
  const logged: string[] = [];
  const log = (level: string) => (m: string) => void logged.push(`${level}: ${m}`);
  const scope = { workspaceRoot: o.workspace, storageDir: o.storageDir };
  const actions = createActions({
    store: o.store,
    runner: o.runner,
    owner: o.owner,
    scope,
    ...(o.writer ? { writer: o.writer(fsRestoreWriter(o.store, scope)) } : {}),
    trusted: o.trusted ?? (() => true),
    notices,
    log: { info: log('info'), warn: log('warn'), error: log('error') },
    restoreEditor: editor,
    views,
    maxSteps: () => o.maxSteps ?? 25,
    ...(o.allowTool ? { allowTool: o.allowTool } : {}),
    ...(o.allowDomains ? { allowDomains: o.allowDomains } : {}),
    ...(o.by ? { by: o.by } : {}),
  });
  return { actions, notices, editor, views, logged };
}

/** A run view editor for tests that open nothing: any call fails the request (and the test that expected none). */
export const noEditor: RunViewEditor = {
  showDiff: async () => Promise.reject(new Error('not in this test')),
  openCheckpoint: async () => Promise.reject(new Error('not in this test')),
  openRun: async () => Promise.reject(new Error('not in this test')),
  exportRun: async () => Promise.reject(new Error('not in this test')),
  revealInTree: async () => Promise.reject(new Error('not in this test')),
};

/** A runner for views of runs that do not execute here: its events are the caller's to emit; anything it would do fails. */
export type IdleRunner = RunViewDeps['runner'] & ActionsDeps['runner'] & { readonly events: Emitter<RunnerEvent> };

export function idleRunner(o: { isActive?: (runId: string) => boolean } = {}): IdleRunner {
  const notHere = async () => Promise.reject(new Error('the runner does not execute here'));
  return {
    events: new Emitter<RunnerEvent>(),
    isActive: o.isActive ?? (() => false),
    partialResponse: () => undefined,
    send: notHere,
    cancel: () => false,
    resume: notHere,
    decideApprovals: notHere,
  };
}
