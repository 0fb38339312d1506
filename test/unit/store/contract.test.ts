// The contract suite against both backends: memory (a shared MemoryDisk per test) and disk (a temp folder).
import fs from 'node:fs';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import { MemoryDisk, openMemoryStore } from '../../../src/store/memory/store';
import { contractSuite } from './contract';
import { fileJournalContract } from './contractFiles';
import { tmpDir } from './helpers';

const memory = () => {
  const disk = new MemoryDisk();
  return { open: (o?: object) => openMemoryStore({ ...o, disk }), cleanup: () => undefined };
};
const onDisk = () => {
  const dir = tmpDir();
  return {
    open: (o?: object) => openDiskStoreReady(dir, o),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
};

contractSuite('memory', memory);
contractSuite('disk', onDisk);
fileJournalContract('memory', memory);
fileJournalContract('disk', onDisk);
