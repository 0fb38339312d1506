// Watches this process's event loop and memory while a test feeds the host hostile input: the
// longest time the loop was kept from its timers, and how far memory grew above where it began.
//
// Stall: the gap between two ticks of a 10 ms interval timer, counted only as far as the main thread
// was on the CPU in it, and less the garbage collector's pauses in it. The suite shares a few cores,
// and a descheduled process can wait longer than any bound without being stalled by our code; a loop
// kept busy by our code is on the CPU for the whole gap. A GC pause is the cost of everything the
// process holds (the whole suite's heap, by the end of it), not of the input: `maxGcPauseMs` reports
// it apart, and the memory figures below bound what the input adds to the heap. On Linux the main
// thread's own CPU time is read from /proc (10 ms ticks); elsewhere the whole process's, which errs
// towards a larger stall. `maxGapMs` keeps the wall-clock figure.
//
// Memory: heapUsed + arrayBuffers (JS objects and strings, and the bytes of Buffers and typed arrays)
// over a baseline taken after a full collection. Garbage counts until the GC takes it, and parsing a
// stream makes tens of MB of short-lived copies; so once the figure passes `collectAboveBytes`, the
// sampler collects garbage itself and takes what is still held. The GC's time is left out of the
// stall figures, and the raw figure is kept in `peakRawGrowthBytes`.
import fs from 'node:fs';
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

export interface StallReport {
  /** Largest gap between ticks counted as main-thread CPU time less GC pauses (see above), ms. */
  maxStallMs: number;
  /** Largest wall-clock gap between ticks, ms. */
  maxGapMs: number;
  /** Longest garbage-collection pause while sampling (not the sampler's own), ms. */
  maxGcPauseMs: number;
  /** Largest growth of what was held (see above), bytes. */
  peakGrowthBytes: number;
  /** Largest growth seen without collecting, garbage included, bytes. */
  peakRawGrowthBytes: number;
  ticks: number;
}

export const SAMPLE_MS = 10;

export interface SamplerOptions {
  /** Above this raw growth, a sample collects garbage first (default 16 MB). */
  collectAboveBytes?: number;
}

export class StallSampler {
  private readonly timer: NodeJS.Timeout;
  private readonly pauses: PerformanceEntry[] = [];
  private readonly gcs = new PerformanceObserver((list) => this.pauses.push(...list.getEntries()));
  /** Each gap between ticks: its wall-clock span and the main thread's CPU time in it. */
  private readonly gaps: { from: number; to: number; cpu: number }[] = [];
  private lastWall: number;
  private lastCpu: number;
  private readonly baseline: number;
  private readonly collectAbove: number;
  private peakGrowth = 0;
  private peakRawGrowth = 0;
  private stopped = false;

  private constructor(o: SamplerOptions) {
    this.collectAbove = o.collectAboveBytes ?? 16 * 1024 * 1024;
    collectGarbage();
    this.baseline = memory();
    this.gcs.observe({ entryTypes: ['gc'] });
    this.lastWall = performance.now();
    this.lastCpu = cpuMs();
    this.timer = setInterval(() => this.tick(), SAMPLE_MS);
  }

  /** Starts sampling now, from a baseline taken after a full collection. */
  static start(o: SamplerOptions = {}): StallSampler {
    return new StallSampler(o);
  }

  /** Samples while `work` runs, then stops: what it returned and what was seen. */
  static async during<T>(work: () => Promise<T>, o: SamplerOptions = {}): Promise<{ result: T; report: StallReport }> {
    const sampler = StallSampler.start(o);
    try {
      const result = await work();
      return { result, report: sampler.stop() };
    } finally {
      sampler.stop();
    }
  }

  /** What was seen so far, sampling on. */
  get current(): StallReport {
    this.pauses.push(...this.gcs.takeRecords());
    const report: StallReport = {
      maxStallMs: 0,
      maxGapMs: 0,
      maxGcPauseMs: 0,
      peakGrowthBytes: this.peakGrowth,
      peakRawGrowthBytes: this.peakRawGrowth,
      ticks: this.gaps.length,
    };
    for (const g of this.gaps) {
      let paused = 0;
      for (const p of this.pauses) {
        const overlap = Math.min(g.to, p.startTime + p.duration) - Math.max(g.from, p.startTime);
        if (overlap <= 0) continue;
        paused += overlap;
        report.maxGcPauseMs = Math.max(report.maxGcPauseMs, p.duration);
      }
      report.maxGapMs = Math.max(report.maxGapMs, g.to - g.from);
      report.maxStallMs = Math.max(report.maxStallMs, Math.min(g.to - g.from, g.cpu) - paused);
    }
    return report;
  }

  /** Stops (once) and reports, with a last sample so a stall at the very end counts too. */
  stop(): StallReport {
    if (!this.stopped) {
      this.stopped = true;
      clearInterval(this.timer);
      this.tick();
      this.pauses.push(...this.gcs.takeRecords());
      this.gcs.disconnect();
    }
    return this.current;
  }

  private tick(): void {
    const wall = performance.now();
    this.gaps.push({ from: this.lastWall, to: wall, cpu: cpuMs() - this.lastCpu });
    const raw = memory() - this.baseline;
    this.peakRawGrowth = Math.max(this.peakRawGrowth, raw);
    let held = raw;
    if (raw > this.collectAbove) {
      collectGarbage();
      held = memory() - this.baseline;
    }
    this.peakGrowth = Math.max(this.peakGrowth, held);
    // The next gap starts now: the sampler's own work (a collection) is not the host's stall.
    this.lastWall = performance.now();
    this.lastCpu = cpuMs();
  }
}

let gc: (() => void) | undefined;
export function collectGarbage(): void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as () => void;
  }
  gc();
}

function memory(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** The main thread's CPU time (Linux: its own, from /proc; elsewhere the whole process's), ms. */
const MAIN_THREAD_STAT = `/proc/self/task/${process.pid}/stat`;
const onLinux = process.platform === 'linux' && fs.existsSync(MAIN_THREAD_STAT);
function cpuMs(): number {
  if (onLinux) {
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th, in 1/100 s.
    const stat = fs.readFileSync(MAIN_THREAD_STAT, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  }
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Megabytes, for messages. */
export const mb = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
