// The store a torture run works against: what its children need in their environment, how the
// parent opens it to verify, and where it keeps what it quarantined. Disk by default; the shared
// store (PostgreSQL) in pgTorture.ts.
import fs from 'node:fs';
import path from 'node:path';
import type { CheckpointStore, StoreEvent } from '../../src/store/api/types';
import { openDiskStoreReady } from '../../src/store/disk/store';

export interface TortureBackend {
  /** Environment for the child (test/torture/storeOf.ts reads it). */
  env: Record<string, string>;
  open(onEvent: (e: StoreEvent) => void): Promise<CheckpointStore>;
  /** What the store moved to quarantine (every trial must leave it empty). */
  quarantined(): Promise<string[]>;
  /** Lost-tail trials cut a commit off a segment file: the disk store's own check. */
  lostTails: boolean;
}

export function diskBackend(storeDir: string): TortureBackend {
  return {
    env: { STORE_DIR: storeDir },
    open: (onEvent) => openDiskStoreReady(storeDir, { onEvent }),
    quarantined: async () => {
      const q = path.join(storeDir, 'quarantine');
      return fs.existsSync(q) ? fs.readdirSync(q) : [];
    },
    lostTails: true,
  };
}
