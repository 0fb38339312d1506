// The store's public surface: the interface, its records, its errors and the two backends.
export * from './api/types';
export * from './api/schema';
export * from './api/errors';
export { openDiskStore, openDiskStoreReady, DiskStore, type DiskStoreOptions } from './disk/store';
export { createMemoryStore, openMemoryStore, MemoryDisk, type MemoryStoreOptions } from './memory/store';
export { nodeFs, type FsLayer } from './disk/fsLayer';
