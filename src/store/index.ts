// The store's public surface: the interface, its records, its errors and the backends (disk, memory,
// PostgreSQL and the shared store beside the local one).
export * from './api/types';
export * from './api/schema';
export * from './api/errors';
export { openDiskStore, openDiskStoreReady, type DiskStore, type DiskStoreOptions } from './disk/store';
export { createMemoryStore, openMemoryStore, MemoryDisk, type MemoryStoreOptions } from './memory/store';
export { nodeFs, type FsLayer } from './disk/fsLayer';
export { openPgStore, openPgStoreReady, type PgStore, type PgStoreOptions } from './pg/store';
export { Store } from './core/store';
export { CombinedStore, type SharedState, type CopyReport } from './pg/combined';
export { checkSharedStore, type SharedStoreCheck } from './pg/check';
export { SharedWorkers, type DecisionBody, type HandOff, type PostedDecision, type SharedChange } from './pg/workers';
export type { HandOffStatus } from './pg/handoffs';
