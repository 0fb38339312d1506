// Machine facts recorded with every result: numbers from different machines are not comparable,
// ratios measured side by side in one run are.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

export interface MachineInfo {
  date: string;
  cpu: string;
  cores: number;
  memoryGb: number;
  node: string;
  platform: string;
  /** `stat -f -c %T` of the temp folder (ext4 reports "ext2/ext3"), and the /proc/mounts type. */
  tempFs: string;
  tempDir: string;
  loadAvg: [number, number, number];
  /** The commit measured, and whether src/store had uncommitted changes. */
  git: string;
}

export function machineInfo(tempDir: string): MachineInfo {
  const cpus = os.cpus();
  const load = os.loadavg();
  return {
    date: new Date().toISOString(),
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${os.release()}`,
    tempFs: fsType(tempDir),
    tempDir,
    loadAvg: [load[0]!, load[1]!, load[2]!],
    git: gitRevision(),
  };
}

function gitRevision(): string {
  try {
    const rev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src/store'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return dirty ? `${rev} (src/store modified)` : rev;
  } catch {
    return 'unknown';
  }
}

function fsType(dir: string): string {
  let statType = '';
  try {
    statType = execFileSync('stat', ['-f', '-c', '%T', dir], { encoding: 'utf8' }).trim();
  } catch {
    // not GNU stat (macOS, Windows): /proc/mounts below or unknown
  }
  const mount = mountType(dir);
  if (statType && mount && mount !== statType) return `${mount} (stat -f: ${statType})`;
  return mount ?? (statType || 'unknown');
}

/** The type of the longest /proc/mounts mount point containing `dir` (Linux only). */
function mountType(dir: string): string | null {
  let text: string;
  try {
    text = fs.readFileSync('/proc/mounts', 'utf8');
  } catch {
    return null;
  }
  const real = fs.realpathSync(dir);
  let best: { point: string; type: string } | null = null;
  for (const line of text.split('\n')) {
    const [, point, type] = line.split(' ');
    if (!point || !type) continue;
    const inside = real === point || real.startsWith(point.endsWith('/') ? point : `${point}/`);
    if (inside && (!best || point.length > best.point.length)) best = { point, type };
  }
  return best?.type ?? null;
}
