// File-system helpers of the benchmark: disk usage of a folder, fsync of a file or folder, and
// the process's I/O counters (Linux /proc/self/io), which count the bytes every thread of this
// process hands to write()/pwrite() — the same meter for all contenders, whatever library writes.
import fs from 'node:fs';
import path from 'node:path';

export interface DiskUsage {
  /** Sum of file sizes (what `du --apparent-size` reports). */
  apparent: number;
  /** Sum of allocated blocks (st_blocks × 512): what the files really occupy. */
  allocated: number;
  files: number;
}

export function diskUsage(dir: string): DiskUsage {
  const u: DiskUsage = { apparent: 0, allocated: 0, files: 0 };
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        const s = fs.statSync(p);
        u.apparent += s.size;
        u.allocated += s.blocks * 512;
        u.files += 1;
      }
    }
  };
  walk(dir);
  return u;
}

/** open + fsync + close: makes a file's data (or a folder's entries) durable. */
export async function fsyncPath(p: string): Promise<void> {
  const fh = await fs.promises.open(p, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export interface IoCounters {
  /** Bytes passed to write syscalls (logical bytes written). */
  wchar: number;
  /** Bytes of page cache this process dirtied (page-granular; what will reach the device). */
  writeBytes: number;
}

const hasProcIo = fs.existsSync('/proc/self/io');

/** null where /proc/self/io does not exist (not Linux): byte figures are then reported as n/a. */
export function ioCounters(): IoCounters | null {
  if (!hasProcIo) return null;
  const text = fs.readFileSync('/proc/self/io', 'utf8');
  const get = (k: string) => Number(new RegExp(`^${k}: (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { wchar: get('wchar'), writeBytes: get('write_bytes') };
}
