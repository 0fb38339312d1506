// The contract suite against both backends: memory (a shared MemoryDisk per test) and disk (a temp folder).
import fs from 'node:fs';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import { MemoryDisk, openMemoryStore } from '../../../src/store/memory/store';
import { contractSuite } from './contract';
import { tmpDir } from './helpers';

contractSuite('memory', () => {
  const disk = new MemoryDisk();
  return { open: (o) => openMemoryStore({ ...o, disk }), cleanup: () => undefined };
});

contractSuite('disk', () => {
  const dir = tmpDir();
  return { open: (o) => openDiskStoreReady(dir, o), cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
});
