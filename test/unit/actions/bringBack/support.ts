// Shared by the bring-back tests (the action's and the command line's): checkout A, a git repository
// where the real runner runs a scripted run (edits, a created file, a command that changes, deletes,
// creates a binary file and makes a script executable), and checkout B, a copy of A before the run.
import fs from 'node:fs';
import path from 'node:path';
import type { CheckpointStore } from '../../../../src/store/api/types';
import { testActions, type TestActions } from '../../../support/actions';
import { owner, tmp } from '../../loop/support';
import { drive, workspace } from '../../runner/files/journalSupport';

export const INITIAL = {
  'a.txt': 'original a\n',
  'cmd.txt': 'v1\n',
  'gone.txt': 'to be deleted\n',
  'tool.sh': '#!/bin/sh\necho v1\n',
  'same.txt': 'never touched\n',
};

export const CALLS = [
  { name: 'write_file', arguments: { path: 'a.txt', content: 'agent a\n' } },
  { name: 'write_file', arguments: { path: 'src/new.txt', content: 'created by the agent\n' } },
  {
    name: 'run_command',
    arguments: {
      command:
        "printf 'v2\\n' > cmd.txt && rm gone.txt && printf '\\000\\001\\377\\376' > bin.dat && printf 'echo v2\\n' >> tool.sh && chmod 755 tool.sh",
    },
  },
];

export const PATHS = ['a.txt', 'bin.dat', 'cmd.txt', 'gone.txt', 'same.txt', 'src/new.txt', 'tool.sh'];

/** Checkout A (a git repository, so the command's earlier content is known) and B, a copy of it before the run; the run driven in A. */
export async function ranElsewhere(
  store?: CheckpointStore,
): Promise<{ a: string; b: string; runId: string; store: CheckpointStore }> {
  const a = workspace(INITIAL, { git: true });
  const b = path.join(tmp('checkout-b'), 'ws');
  fs.cpSync(a, b, { recursive: true, filter: (src) => !src.includes(`${path.sep}.git`) });
  const driven = await drive(a, CALLS, store ? { store } : {});
  return { a, b, runId: driven.runId, store: driven.store };
}

export function checkoutActions(store: CheckpointStore, ws: string): TestActions {
  const runner = { isActive: () => false, resume: notHere, decideApprovals: notHere };
  return testActions({ store, runner, workspace: ws, owner: owner('checkout B') });
}

const notHere = async () => Promise.reject(new Error('no runner in this checkout'));
