// The run view's host logic, vscode-free (the panel wires it to a webview; the benchmark drives it
// from Chromium directly): answers the webview's typed requests, pushes the thread's state when
// the store or the runner says something changed, and forwards streamed tokens coalesced.
import { DisposableBase, toDisposable } from '../../common/disposable';
import { errorMessage } from '../../common/errors';
import type { Actions } from '../../actions';
import { RunGuards } from '../../actions/guards';
import type { RunnerEvent } from '../../runner/events';
import type { SendOutcome } from '../../runner/runner';
import type { Emitter } from '../../common/emitter';
import type { RunSummary } from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';
import {
  type HostMessage,
  type Method,
  type Params,
  parseWebviewMessage,
  type RequestMessage,
  type Result,
  type ApprovalModeLine,
  type StateMessage,
} from './protocol';
import { composerHint, headerDataOf, headerOf, readHeaderData } from './header';
import { cut, StreamBound } from './bounds';
import { ThreadTranscript } from './thread';
import { CallProgress, toolResult } from './externalTools';
import { isActionRequest, RunViewActionRequests, type RunViewEditor } from './actionRequests';

export interface RunViewDeps {
  store: CheckpointStore;
  runner: {
    readonly events: Emitter<RunnerEvent>;
    isActive(runId: string): boolean;
    partialResponse(runId: string): { step: number; text: string; reasoning: string } | undefined;
    send(runId: string, text: string, opts?: { id?: string }): Promise<SendOutcome>;
    /** Stops a run executing in this window (it pauses with a checkpoint); false when it is not executing here. */
    cancel(runId: string): boolean;
    /** Undo condense (context/undo.ts); absent where the runner cannot (a read-only view). */
    undoCondense?(runId: string): Promise<string>;
  };
  /** The runs of a thread, oldest first. */
  threadRuns(threadId: string): Promise<RunSummary[]>;
  /** The user's actions on runs (src/actions), called with types; each asks its guard first. */
  actions: Pick<Actions, 'guards' | 'decide' | 'restore' | 'fork' | 'resume' | 'handOff'>;
  /** What the view opens in the editor (views/run/actions.ts). */
  editor: RunViewEditor;
  log: { info(m: string): void; warn(m: string): void };
  /** This window's workspace folder, where runs work: a run recorded elsewhere says so in its header. */
  workspaceRoot?: string;
  /** How commands are approved in this workspace now, for the header (absent: not shown). */
  approvalMode?(): ApprovalModeLine;
  /**
   * The runs the workers have (actions/background.ts): a hand-off taken, parked or ended changes the
   * header (its buttons, its note) without a record of the run changing.
   */
  workers?: { onDidChange(l: (runId: string | undefined) => void): { dispose(): void } };
}

/** "Show all" of a tool's result shows this much of it (the whole stays in the run). */
export const OUTPUT_ALL_MAX_CHARS = 1_000_000;
const REFRESH_MS = 60;
const DELTA_MS = 16;
/** Items of the thread's end read and sent with the first state (the view's first paint): two pages. */
export const FIRST_ITEMS = 80;
/**
 * Longest the rest of a long thread waits for the view to take its first state and draw it (a view
 * that never loads, or is hidden and draws nothing).
 */
const READY_WAIT_MS = 2000;

export class RunViewController extends DisposableBase {
  readonly transcript: ThreadTranscript;
  /** Inbound messages refused (malformed, forged, stale, read-only), for tests and the log. */
  rejectedMessages = 0;
  private readonly running = new Map<string, Set<string>>();
  private readonly progress = new CallProgress();
  private readonly requests: RunViewActionRequests;
  private streaming: { runId: string; step: number } | null = null;
  private readonly streamed = new StreamBound();
  private pendingDeltas: Extract<HostMessage, { type: 'delta' }>[] = [];
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private deltaTimer: ReturnType<typeof setTimeout> | undefined;
  private ready = false;
  private viewReady!: (delivered: unknown) => void;
  /** Settles when the view says it is ready, with the delivery of what it was sent first. */
  private readonly whenReady = new Promise<unknown>((resolve) => (this.viewReady = resolve));
  private viewPainted!: () => void;
  /** Settles when the view says it has drawn the first state it was sent. */
  private readonly whenPainted = new Promise<void>((resolve) => (this.viewPainted = resolve));
  private revealOnReady: string | undefined;
  /** Reads and sends, one at a time (the panel's open and the view's ready may ask at once). */
  private pushing: Promise<void> = Promise.resolve();
  /** The last state read; what a view that just became ready is sent first. */
  private lastState: Omit<StateMessage, 'streaming'> | undefined;
  /** The item the view was last asked to scroll to (a step's waypoint, an approval card). */
  lastReveal: string | undefined;

  constructor(
    readonly threadId: string,
    public focusRunId: string,
    private readonly deps: RunViewDeps,
    private readonly post: (m: HostMessage) => unknown,
  ) {
    super();
    this.transcript = new ThreadTranscript(deps.store, {
      isActive: (id) => deps.runner.isActive(id),
      runningCalls: (id) => this.running.get(id) ?? new Set(),
      progress: (id) => this.progress.of(id),
    });
    this.requests = new RunViewActionRequests({
      ...deps,
      runOf: (runId) => this.transcript.runList.find((r) => r.run_id === runId)!,
    });
    this._register(deps.runner.events.on((e) => this.onRunnerEvent(e)));
    this._register(
      deps.store.onEvent((e) => 'run_id' in e && e.run_id && this.touches(e.run_id) && this.schedule(e.run_id)),
    );
    if (deps.workers)
      this._register(
        deps.workers.onDidChange((id) => {
          for (const runId of id ? [id] : this.transcript.runList.map((r) => r.run_id))
            if (this.touches(runId)) this.schedule(runId);
        }),
      );
    this._register(toDisposable(() => [this.refreshTimer, this.deltaTimer].forEach((t) => t && clearTimeout(t))));
  }

  /** Scrolls the view to an item once it is shown (the first pending approval, a step's waypoint). */
  reveal(key: string): void {
    this.lastReveal = key;
    if (this.ready) void this.post({ type: 'reveal', key });
    else this.revealOnReady = key;
  }

  /** Key of the first pending approval card of the thread, if any. */
  firstPendingKey(): string | undefined {
    return this.transcript.firstPendingKey();
  }

  async receive(raw: unknown): Promise<void> {
    const parsed = parseWebviewMessage(raw);
    if (!parsed.ok) return this.reject(parsed.error);
    const msg = parsed.message;
    if (msg.type === 'ready') {
      this.ready = true;
      // What was read while the view loaded goes out at once; a read under way sends when done.
      const delivered = this.lastState ? this.send(this.lastState) : undefined;
      this.viewReady(
        Promise.resolve(delivered).catch((err) =>
          this.deps.log.warn(`run view: state not delivered: ${errorMessage(err)}`),
        ),
      );
      await this.pushState();
      if (this.revealOnReady) void this.post({ type: 'reveal', key: this.revealOnReady });
      this.revealOnReady = undefined;
      return;
    }
    if (msg.type === 'painted') return this.viewPainted();
    try {
      const result = await this.handle(msg);
      void this.post({ type: 'response', id: msg.id, ok: true, result });
    } catch (err) {
      this.reject(`${msg.method} refused: ${errorMessage(err)}`, msg.id);
    }
  }

  /**
   * Reads the thread again and sends it (when the view opens, after a reload, when something
   * changed). The first read of a long thread sends its end first, from the newest checkpoints,
   * with the items to paint; then the whole thread.
   */
  pushState(force = false): Promise<void> {
    const pushed = this.pushing.then(() => this.readAndSend(force));
    this.pushing = pushed.catch(() => undefined);
    return pushed;
  }

  private async readAndSend(force: boolean): Promise<void> {
    const runs = await this.deps.threadRuns(this.threadId);
    if (runs.length === 0) return;
    const first = this.transcript.version === 0;
    if (first) {
      await this.transcript.refreshNewest(runs, FIRST_ITEMS);
      await this.send(await this.readState(runs, true));
      // Reading the rest is long and synchronous in parts: it waits until the view has taken the
      // first state and drawn it (the view's "ready" and that message would otherwise wait behind
      // it, and the view's first frame would share the machine with it).
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise((resolve) => (timer = setTimeout(resolve, READY_WAIT_MS)));
      await Promise.race([this.whenReady.then(() => this.whenPainted), waited]);
      clearTimeout(timer);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    const changed = await this.transcript.refresh(runs);
    if (!changed && !force) return;
    await this.send(await this.readState(runs, first));
  }

  /** The state of the thread as read; `withPage`: with the items the view paints first. */
  private async readState(runs: RunSummary[], withPage: boolean): Promise<Omit<StateMessage, 'streaming'>> {
    const last = runs[runs.length - 1]!;
    const { guards } = this.deps.actions;
    const [readOnly, runHeaders] = await Promise.all([
      guards.viewReadOnly(last), // from the summary in hand: no log read
      Promise.all(
        runs.map(async (r) => {
          const read = this.transcript.dataOf(r.run_id);
          const [data, whyNot] = await Promise.all([
            read ? headerDataOf(read) : readHeaderData(this.deps.store, r),
            guards.reasons(r),
          ]);
          return headerOf(r, data, {
            active: this.deps.runner.isActive(r.run_id),
            workspaceRoot: this.deps.workspaceRoot,
            whyNot,
          });
        }),
      ),
    ]);
    const size = this.transcript.size;
    const from = Math.max(0, size - FIRST_ITEMS);
    return {
      type: 'state',
      version: this.transcript.version,
      threadId: this.threadId,
      focusRunId: this.focusRunId,
      runs: runHeaders,
      outline: this.transcript.outline(),
      partial: this.transcript.partial,
      page: withPage ? { from, items: this.transcript.page(from, size) } : null,
      readOnly,
      composerHint: composerHint(
        last,
        this.deps.runner.isActive(last.run_id),
        runHeaders[runHeaders.length - 1]!.actions.includes('bringBack'),
      ),
      approvalMode: this.deps.approvalMode?.() ?? null,
    };
  }

  /**
   * Sends a state read before, with the text streamed so far as of now: synchronous up to the
   * post, so the text replaces exactly the deltas not sent yet.
   */
  private send(state: Omit<StateMessage, 'streaming'>): Promise<unknown> | undefined {
    this.lastState = state;
    if (!this.ready) return undefined;
    const lastRunId = state.runs[state.runs.length - 1]!.runId;
    if (this.streaming && !this.deps.runner.isActive(this.streaming.runId)) this.streaming = null;
    const partial = this.deps.runner.partialResponse(lastRunId);
    if (!this.streaming && partial) this.streaming = { runId: lastRunId, step: partial.step }; // opened mid-stream
    const s = this.streaming;
    const streaming =
      s && partial && partial.step === s.step && s.runId === lastRunId
        ? {
            ...s,
            text: this.streamed.whole(s, 'text', partial.text),
            reasoning: this.streamed.whole(s, 'reasoning', partial.reasoning),
          }
        : s;
    if (streaming && 'text' in streaming)
      this.pendingDeltas = this.pendingDeltas.filter((d) => d.runId !== streaming.runId || d.step !== streaming.step);
    return Promise.resolve(this.post({ ...state, streaming }));
  }

  private async handle(msg: RequestMessage): Promise<Result<Method>> {
    if (msg.method === 'page')
      return {
        version: this.transcript.version,
        from: msg.params.from,
        items: this.transcript.page(msg.params.from, msg.params.to),
      };
    const runId = msg.params.runId;
    if (!this.transcript.runList.some((r) => r.run_id === runId))
      throw new Error(`it names run ${runId}, which is not in this view's thread`);
    if (isActionRequest(msg)) {
      await this.requests.handle(msg);
      return {};
    }
    switch (msg.method) {
      case 'toolOutput':
        return { text: cut(await this.fullOutput(runId, msg.params.toolCallId), OUTPUT_ALL_MAX_CHARS) };
      case 'toolResult':
        return toolResult(this.deps.store, runId, msg.params.toolCallId);
      case 'condenseAction': {
        RunGuards.refuse(await this.deps.actions.guards.readOnly(runId));
        const marker = this.transcript.findKind(
          'condense',
          (i) => i.runId === runId && i.condenseId === msg.params.condenseId,
        );
        if (!marker?.undoable)
          throw new Error(
            `condense ${msg.params.condenseId} is not the run's current condense, or the run is not stopped`,
          );
        if (!this.deps.runner.undoCondense) throw new Error('Undo condense is not available here');
        await this.deps.runner.undoCondense(runId);
        this.deps.log.info(`run ${runId}: ${msg.params.condenseId} undone; the next request gets the previous context`);
        this.schedule(runId);
        return {};
      }
      case 'send': {
        RunGuards.refuse(await this.deps.actions.guards.readOnly(runId));
        const out = await this.deps.runner.send(runId, msg.params.text, { id: msg.params.clientId });
        this.deps.log.info(
          `run ${runId}: message ${out.kind === 'queued' ? `queued (${out.when})` : `started follow-up run ${out.runId}`}`,
        );
        if (out.kind === 'follow-up') this.focusRunId = out.runId;
        this.schedule(out.runId);
        return { kind: out.kind, runId: out.runId, when: out.kind === 'queued' ? out.when : null };
      }
    }
  }

  private async fullOutput(runId: string, toolCallId: string): Promise<string> {
    const { store } = this.deps;
    const effect = (await store.listEffects(runId)).find((e) => e.tool_call_id === toolCallId);
    if (effect?.result?.blob) return store.getBlob(runId, effect.result.blob);
    const message = (await store.loadSnapshot(runId)).snapshot.messages.find(
      (m) => m.role === 'tool' && m.tool_call_id === toolCallId,
    );
    const text = message?.content ?? effect?.result?.output;
    if (text === undefined) throw new Error(`tool call ${toolCallId} of run ${runId} has no recorded result`);
    return text;
  }

  private reject(reason: string, id?: number): void {
    this.rejectedMessages += 1;
    this.deps.log.warn(reason);
    if (id !== undefined) void this.post({ type: 'response', id, ok: false, error: reason });
  }

  private touches(runId: string): boolean {
    return (
      this.transcript.runList.some((r) => r.run_id === runId) ||
      this.transcript.runList.length === 0 ||
      runId === this.focusRunId
    );
  }

  private onRunnerEvent(e: RunnerEvent): void {
    if (e.type === 'log' || !this.touches(e.runId)) {
      // A follow-up started elsewhere (the command, another panel) joins this thread on the next read.
      if (e.type === 'state' && e.state === 'running') this.schedule(e.runId);
      return;
    }
    if (e.type === 'llm-delta')
      return this.delta({ type: 'delta', runId: e.runId, step: e.step, kind: e.kind, text: e.delta });
    if (e.type === 'llm' && e.status === 'start') this.streaming = { runId: e.runId, step: e.step };
    if (e.type === 'tool') {
      const set = this.running.get(e.runId) ?? new Set<string>();
      if (e.status === 'start') set.add(e.toolCallId);
      else set.delete(e.toolCallId);
      this.running.set(e.runId, set);
    }
    this.progress.track(e);
    if (e.type === 'phase' && e.record.phase === 'post_llm') this.streaming = null;
    this.schedule(e.runId);
  }

  /** Streamed tokens go out every frame or so, several deltas in one message each time, up to the text's bound. */
  private delta(arrived: Extract<HostMessage, { type: 'delta' }>): void {
    const d = this.streamed.delta(arrived);
    if (!d) return;
    const last = this.pendingDeltas[this.pendingDeltas.length - 1];
    if (last && last.runId === d.runId && last.step === d.step && last.kind === d.kind) last.text += d.text;
    else this.pendingDeltas.push({ ...d });
    this.deltaTimer ??= setTimeout(() => {
      this.deltaTimer = undefined;
      for (const m of this.pendingDeltas.splice(0)) void this.post(m);
    }, DELTA_MS);
  }

  private schedule(runId: string): void {
    this.transcript.invalidate(runId);
    if (!this.ready) return;
    this.refreshTimer ??= setTimeout(() => {
      this.refreshTimer = undefined;
      this.pushState().catch((err) => this.deps.log.warn(`run view refresh failed: ${errorMessage(err)}`));
    }, REFRESH_MS);
  }
}

export type { Params };
