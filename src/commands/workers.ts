// *Continue in background* and *Bring back here* from the palette and the Runs tree: pick the run
// (from the tree node, or a quick pick of the runs each applies to) and call the hand-off action
// (actions/handOff.ts), which asks its guard first — the same call the run view's header makes.
import * as vscode from 'vscode';
import { isTerminalState } from '../store/api/schema';
import { CommandIds } from '../contributes';
import type { CommandContext } from './context';
import { pickRun } from './pickers';
import { registerCommand } from './register';

export function registerWorkerCommands(c: CommandContext): vscode.Disposable {
  const { background, handOff } = c.actions;
  return vscode.Disposable.from(
    registerCommand(CommandIds.continueInBackground, async (arg?: unknown) => {
      const run = await pickRun(c.model, arg, {
        title: 'Continue in background',
        placeHolder: 'Hand which run to the workers?',
        filter: (r) => c.store.isShared(r.run_id) && !isTerminalState(r.state) && !background.get(r.run_id),
        empty: 'Agent Waypoints: no unfinished run of the shared store to hand to the workers.',
      });
      return run ? handOff.continueInBackground(run.run_id) : false;
    }),
    registerCommand(CommandIds.bringBackHere, async (arg?: unknown) => {
      const run = await pickRun(c.model, arg, {
        title: 'Bring back here',
        placeHolder: 'Take which run back from the workers?',
        filter: (r) => background.get(r.run_id) !== undefined,
        empty: 'Agent Waypoints: the workers have no run of this project.',
      });
      return run ? handOff.bringBackHere(run.run_id) : undefined;
    }),
  );
}
