// The store's public surface: the interface, its records, its errors and the two backends.
export * from './types';
export * from './schema';
export * from './errors';
export { openDiskStore, openLowdbStore, LowdbStore, type LowdbStoreOptions } from './lowdbStore';
export { createMemoryStore, openMemoryStore, MemoryDisk, type MemoryStoreOptions } from './memory';
export { nodeFs, type FsLayer } from './fsLayer';
