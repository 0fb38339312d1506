// The contract suite against both backends: memory (a shared MemoryDisk per test) and lowdb (a temp folder).
import fs from 'node:fs';
import { openLowdbStore } from '../../../src/store/lowdbStore';
import { MemoryDisk, openMemoryStore } from '../../../src/store/memory';
import { contractSuite } from './contract';
import { tmpDir } from './helpers';

contractSuite('memory', () => {
  const disk = new MemoryDisk();
  return { open: (o) => openMemoryStore({ ...o, disk }), cleanup: () => undefined };
});

contractSuite('lowdb', () => {
  const dir = tmpDir();
  return { open: (o) => openLowdbStore(dir, o), cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
});
