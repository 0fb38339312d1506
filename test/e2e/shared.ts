// One workbench for the describe blocks of a file whose tests leave nothing the next one needs pristine
// (as GitLens runs its Playwright tests against one worker-scoped VS Code): started before the first
// block's tests, closed after the last block's, and tidied between tests — questions closed,
// notifications cleared, editors closed. A test that reloads the window or crashes its extension host
// shares one too when every run before it ended finished (what the window shows after the reload is
// then its run alone), and so does one that opens a second window (its pick names its own run); tests
// that need a fresh trust question or a workspace no run has touched keep their own (useWorkbench).
//
// One scripted model server serves the blocks: each block's conversation is picked by a phrase of its
// task (the scripted server's subconversations), so the blocks' runs never take each other's turns.
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../fixtures/modelServer/scenario';
import { keepFailure, scaled, Workbench, type WorkbenchOptions } from './harness';

export interface SharedWorkbench {
  /** In a describe block: the hooks that give its tests the shared workbench, tidied before each but the first. */
  use(): () => Workbench;
  model(): ModelServer;
}

/** A conversation of the shared model server: its turns, for the runs whose task contains `task`. */
export interface Conversation {
  task: string;
  turns: Scenario['turns'];
}

/** The scripted scenario that plays each conversation for the task that names it. */
export function scenarioOf(name: string, conversations: Conversation[]): Scenario {
  return {
    name,
    description: `offline demo model: ${conversations.length} conversations, one per task`,
    model: DEMO_MODEL_ID,
    turns: [{ reply: { content: `(offline demo model) ${name}: no conversation names this task.` } }],
    subconversations: conversations.map((c, i) => ({ id: `c${i}`, user_contains: c.task, turns: c.turns })),
  };
}

/** The shared workbenches still open: a run that selects only some of a file's blocks (--grep) never reaches the last one's `after`. */
const open = new Set<() => Promise<void>>();

/** Closes every shared workbench still open (the e2e root hooks call it once all files have run). */
export async function closeSharedWorkbenches(): Promise<void> {
  for (const close of [...open]) await close();
}

/** `scenario` may be made when the first block starts (a conversation whose length follows the machine's load then). */
export function sharedWorkbench(
  scenario: Scenario | (() => Scenario),
  options: (model: ModelServer) => WorkbenchOptions,
): SharedWorkbench {
  let users = 0;
  let done = 0;
  let server: ModelServer | undefined;
  let wb: Workbench | undefined;
  let fresh = true;
  const close = async () => {
    open.delete(close);
    await wb?.close();
    await server?.close();
    wb = undefined;
    server = undefined;
  };
  const current = () => {
    if (!wb) throw new Error('shared workbench not started');
    return wb;
  };
  return {
    model: () => {
      if (!server) throw new Error('model server not started');
      return server;
    },
    use() {
      users += 1;
      before(async function () {
        if (wb) return;
        this.timeout(scaled(180_000));
        open.add(close);
        server ??= await startModelServer({ scenario: typeof scenario === 'function' ? scenario() : scenario });
        wb = await Workbench.start(options(server));
      });
      beforeEach(async function () {
        this.timeout(scaled(90_000));
        if (!fresh) await current().tidy();
        fresh = false;
      });
      afterEach(async function () {
        if (wb && this.currentTest?.state === 'failed') await keepFailure(wb, this.currentTest.fullTitle());
      });
      after(async () => {
        if (++done < users) return;
        await close();
      });
      return current;
    },
  };
}
