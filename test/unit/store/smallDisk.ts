// A small, real file system for disk-full and read-only tests: a tmpfs mounted for the test where
// the machine allows it (root with CAP_SYS_ADMIN: these machines and CI), else the same situations
// injected through the store's fs layer. Never skipped: `kind` says which one ran.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { FaultyFs } from './faultyFs';
import { tmpDir } from './helpers';

export interface SmallDisk {
  root: string;
  kind: 'tmpfs' | 'injected';
  /** How the last readOnly() was made: a real remount, or EROFS injected (no tmpfs, or the remount was refused as busy). */
  readOnlyKind: 'remount' | 'injected' | null;
  /**
   * Runs `fn` while the disk is read-only: remounted read-only, or EROFS injected into `fsl` (a
   * remount is refused while a file is open for writing — an owned run keeps its witness open — as
   * happens when the kernel itself remounts a failing disk read-only, where writes then fail with EROFS).
   */
  readOnly(fsl: FaultyFs, fn: () => Promise<void>): Promise<void>;
  /** Free bytes now (tmpfs: statfs; injected: what `limit` left). */
  freeBytes(): number;
  /** Leaves about `bytes` free: a filler file on tmpfs, a capacity on `fsl` when injected. */
  leaveFree(bytes: number, fsl?: FaultyFs): void;
  /** Gives all the space back (removes the filler / the capacity). */
  release(fsl?: FaultyFs): void;
}

const WRITE_OPS = [
  'createExclusive',
  'openForUpdate',
  'write',
  'pwrite',
  'rename',
  'link',
  'unlink',
  'mkdir',
  'utimes',
  'rmrf',
] as const;

function tryMount(dir: string, sizeKb: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k,mode=0700`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function withSmallDisk<T>(opts: { sizeKb: number }, fn: (disk: SmallDisk) => Promise<T>): Promise<T> {
  const root = tmpDir('aw-smalldisk-');
  const mounted = tryMount(root, opts.sizeKb);
  const filler = path.join(root, '.filler');
  let capacity = opts.sizeKb * 1024;
  const disk: SmallDisk = {
    root,
    kind: mounted ? 'tmpfs' : 'injected',
    readOnlyKind: null,
    async readOnly(fsl, body) {
      let remounted = false;
      if (mounted) {
        try {
          execFileSync('mount', ['-o', 'remount,ro', root], { stdio: 'ignore' });
          remounted = true;
        } catch {
          // busy: a file is open for writing
        }
      }
      if (!remounted) for (const op of WRITE_OPS) fsl.inject(op, 'EROFS');
      disk.readOnlyKind = remounted ? 'remount' : 'injected';
      try {
        await body();
      } finally {
        if (remounted) execFileSync('mount', ['-o', 'remount,rw', root]);
        else fsl.clear();
      }
    },
    freeBytes() {
      if (!mounted) return capacity;
      const st = fs.statfsSync(root);
      return st.bavail * st.bsize;
    },
    leaveFree(bytes, fsl) {
      if (!mounted) {
        capacity = bytes;
        fsl?.setCapacity(bytes);
        return;
      }
      fs.rmSync(filler, { force: true });
      const fill = Math.max(0, disk.freeBytes() - bytes);
      const fd = fs.openSync(filler, 'w');
      try {
        const chunk = Buffer.alloc(64 * 1024, 0x2e);
        for (let left = fill; left > 0; left -= chunk.length) fs.writeSync(fd, chunk, 0, Math.min(chunk.length, left));
      } finally {
        fs.closeSync(fd);
      }
    },
    release(fsl) {
      fs.rmSync(filler, { force: true });
      fsl?.setCapacity(undefined);
    },
  };
  try {
    return await fn(disk);
  } finally {
    if (mounted) {
      try {
        execFileSync('umount', [root], { stdio: 'ignore' });
      } catch {
        execFileSync('umount', ['-l', root], { stdio: 'ignore' });
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
  }
}
