// The run view's figures (docs/design.md, Targets): a 1000-step, ≈10 MB run opened in the real webview script
// in Chromium against the real host controller and the disk store — time from "open" to first
// paint, the webview's JS heap, and streaming at 200 tokens/s (backlog, lag after the last token).
// Measured and printed, never asserted.
import path from 'node:path';
import { launchChromium } from '../test/support/browser';
import {
  epochNow,
  openRunViewPage,
  prepareRunViewWindow,
  type RunViewPage,
  type RunViewWindow,
} from '../test/support/runViewPage';
import { BENCH_OWNER } from './contenders/ours';
import { startRunViewHost, type RunViewHostThread } from './runViewHost';
import { writeFinishedRun } from './workload';

/** When each part of opening the view was done, in ms from "open" (the panel's creation began). */
export interface OpenParts {
  /** The page exists and has its HTML (its script still loading); the host has been reading the thread since the open. */
  panel: number;
  /** The view's script starts running (its bundle loaded and parsed). */
  script: number;
  /** The host hands the first state (the thread's end, with its items) to the page. */
  hostState: number;
  /** The view has handled the first state message. */
  state: number;
  /** The first frame that shows items. */
  frame: number;
}

export interface RunViewFigures {
  steps: number;
  /** Warm opens and cold floor opens measured (each reported as its median). */
  repeats: number;
  conversationMB: number;
  /**
   * Open → first paint, the run not in memory: the median of `repeats` cold opens, each in a fresh
   * browser and host thread as the floor's (the first open in the window the warm opens follow is
   * slower, a page's first in that browser, and the floor has no such open), `coldRange` the fastest
   * and slowest.
   */
  firstPaintMs: number;
  coldRange: [number, number];
  /** The same with the run already in memory (a second open in one window): the median of `repeats`. */
  firstPaintWarmMs: number;
  /** Cold: when the view had the whole thread (its first state holds only the end), ms after open. */
  wholeThreadMs: number;
  parts: { cold: OpenParts; warm: OpenParts };
  /**
   * The same page opened cold on a 1-step run (next to nothing to read): what the browser, the page
   * and the view's script take before any of the run's length counts. The median of three, each in a
   * fresh browser and host thread; `floorRange` the fastest and slowest first frame.
   */
  floor: OpenParts;
  floorRange: [number, number];
  heapMB: number;
  items: number;
  streaming: {
    tokensPerSecond: number;
    seconds: number;
    tokens: number;
    maxBacklogTokens: number;
    lagAfterLastMs: number;
    frames: number;
  };
}

const TOKEN = 'tok ';

export async function measureRunView(o: {
  steps: number;
  streamSeconds: number;
  /** Warm opens, and cold opens of the floor (the median of each is reported). */
  repeats: number;
  dir: string;
  log(m: string): void;
}): Promise<RunViewFigures> {
  o.log(`  run view: writing a ${o.steps}-step run …`);
  const runId = 'bench-view-run';
  const { dir, workload } = await writeFinishedRun(path.join(o.dir, 'run-view-store'), runId, o.steps, BENCH_OWNER);

  // The host end on a thread of its own (its store opened, the run not read yet); Chromium stands
  // for VS Code's window, already running, with its webview resource server: starting them is not
  // part of opening the view.
  const host = await startRunViewHost(dir, runId);
  const browser = await launchChromium();
  const window = await prepareRunViewWindow(browser);
  const open = () => openView(host, window, o.log);
  o.log(`  run view: open → first paint (cold, then warm ×${o.repeats}) …`);
  const cold = await open();
  // The warm opens measure a run in memory, not the cold view's reading the rest of its thread.
  await cold.view.page.waitForFunction('window.__runViewStats.wholeMs > 0', undefined, { timeout: 120_000 });
  const wholeThreadMs =
    (await pageClock(cold.view.page))((await cold.view.page.evaluate('window.__runViewStats.wholeMs')) as number) -
    cold.t0;
  const warm: OpenParts[] = [];
  for (let i = 0; i < o.repeats; i++) {
    const w = await open();
    warm.push(w.parts);
    await w.view.close();
  }
  const warmMedian = warm.sort((a, b) => a.frame - b.frame)[o.repeats >> 1]!;
  const { view } = cold;
  const cdp = await view.page.context().newCDPSession(view.page);
  await cdp.send('HeapProfiler.collectGarbage');
  const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
  const items = await host.items();

  o.log(`  run view: streaming at 200 tokens/s for ${o.streamSeconds} s …`);
  const total = 200 * o.streamSeconds;
  const last = await host.stream({ step: o.steps + 1, tokens: total, perSecond: 200, token: TOKEN });
  const chars = total * TOKEN.length;
  await view.page.waitForFunction(`window.__runViewStats.charsRendered >= ${chars}`, undefined, {
    timeout: 60_000,
    polling: 'raf',
  });
  const lag = epochNow() - last;
  const s = (await view.page.evaluate('window.__runViewStats')) as { maxBacklog: number; deltas: number };
  const frames = (await view.page.evaluate('window.__runViewStats.frames ?? 0')) as number;
  await view.close();
  await window.close();
  await browser.close();
  await host.close();
  o.log(
    `  run view: the run and the floor (a 1-step run) opened cold ×${o.repeats} each, in turn, each in a browser of its own …`,
  );
  const floorDir = (await writeFinishedRun(path.join(o.dir, 'run-view-floor'), runId, 1, BENCH_OWNER)).dir;
  const floor: OpenParts[] = [];
  const colds: number[] = [];
  for (let i = 0; i < o.repeats; i++) {
    colds.push((await coldOpen(dir, runId, o.log)).frame);
    floor.push(await coldOpen(floorDir, runId, o.log));
  }
  colds.sort((a, b) => a - b);
  return {
    steps: o.steps,
    repeats: o.repeats,
    floor: floor.sort((a, b) => a.frame - b.frame)[o.repeats >> 1]!,
    floorRange: [floor[0]!.frame, floor.at(-1)!.frame],
    conversationMB: workload.conversationBytes / 1e6,
    firstPaintMs: colds[colds.length >> 1]!,
    coldRange: [colds[0]!, colds.at(-1)!],
    firstPaintWarmMs: warmMedian.frame,
    wholeThreadMs,
    parts: { cold: cold.parts, warm: warmMedian },
    heapMB: heap.usedSize / 1e6,
    items,
    streaming: {
      tokensPerSecond: 200,
      seconds: o.streamSeconds,
      tokens: total,
      maxBacklogTokens: Math.ceil(s.maxBacklog / TOKEN.length),
      lagAfterLastMs: lag,
      frames,
    },
  };
}

/**
 * The host's clock (epochNow) at a time the page gave by its own performance.now(): read once, the
 * page idle, between two readings of the host's (a round trip of a millisecond or two). Not through
 * the page's performance.timeOrigin: on these VMs the page's epoch can part from the host's by
 * seconds while the two monotonic clocks agree, which would move every page mark by as much.
 */
async function pageClock(page: RunViewPage['page']): Promise<(pageMs: number) => number> {
  const before = epochNow();
  const now = (await page.evaluate('performance.now()')) as number;
  const after = epochNow();
  const hostAtNow = (before + after) / 2;
  return (pageMs) => hostAtNow - (now - pageMs);
}

/** Opens the view of `runId` in `window` and waits for its first frame with items: when each part was done. */
async function openView(
  host: RunViewHostThread,
  window: RunViewWindow,
  log: (m: string) => void,
): Promise<{ view: RunViewPage; parts: OpenParts; t0: number }> {
  const t0 = epochNow();
  const view = await openRunViewPage({ host, window });
  const panel = epochNow() - t0;
  await view.page.waitForFunction('window.__runViewStats && window.__runViewStats.firstPaintMs > 0', undefined, {
    timeout: 120_000,
    polling: 'raf',
  });
  const hostTime = await pageClock(view.page);
  const marks = (await view.page.evaluate('window.__runViewStats')) as Record<string, number>;
  const at = (pageMs: number) => hostTime(pageMs) - t0;
  const parts = {
    panel,
    script: at(marks.scriptStartMs!),
    hostState: view.firstSentAt.state! - t0,
    state: at(marks.stateMs!),
    frame: at(marks.firstPaintMs!),
  };
  log(
    `    ${Object.entries(parts)
      .map(([k, v]) => `${k} ${v.toFixed(0)}`)
      .join(', ')} ms after open`,
  );
  return { view, parts, t0 };
}

/** The first open of a run in a fresh host thread and a fresh browser (cold, as the benchmark's first open): its parts. */
async function coldOpen(dir: string, runId: string, log: (m: string) => void): Promise<OpenParts> {
  const host = await startRunViewHost(dir, runId);
  const browser = await launchChromium();
  const window = await prepareRunViewWindow(browser);
  const { view, parts } = await openView(host, window, log);
  await view.close();
  await window.close();
  await browser.close();
  await host.close();
  return parts;
}

export function runViewTable(f: RunViewFigures): string {
  const ok = (v: boolean) => (v ? '✔' : '✘');
  const { cold, warm } = f.parts;
  const part = (label: string, k: keyof OpenParts, before?: keyof OpenParts) =>
    `| ${label} | ${cell(cold, k, before)} | ${cell(warm, k, before)} | ${cell(f.floor, k, before)} |`;
  return [
    `**Run view** (${f.steps} steps, conversation ${f.conversationMB.toFixed(2)} MB, ${f.items} transcript items; real webview script in Chromium, host controller over the disk store)`,
    '',
    '| figure | measured | goal | |',
    '|---|---|---|---|',
    `| open → first paint, run not in memory (cold; median of ${f.repeats}, each in a fresh browser) | ${f.firstPaintMs.toFixed(0)} ms (${f.coldRange.map((v) => v.toFixed(0)).join('–')}) | ≤ 300 ms | ${ok(f.firstPaintMs <= 300)} |`,
    `| open → first paint, run in memory (warm, median of ${f.repeats}) | ${f.firstPaintWarmMs.toFixed(0)} ms | ≤ 300 ms | ${ok(f.firstPaintWarmMs <= 300)} |`,
    `| the floor: a 1-step run opened cold (nothing to read; median of ${f.repeats}, each in a fresh browser) | ${f.floor.frame.toFixed(0)} ms (${f.floorRange.map((v) => v.toFixed(0)).join('–')}) | | |`,
    `| cold: the whole thread in the view (its outline, for the scrollbar; the first state holds the end) | ${f.wholeThreadMs.toFixed(0)} ms | | |`,
    `| webview JS heap after open (after GC) | ${f.heapMB.toFixed(1)} MB | ≤ 50 MB | ${ok(f.heapMB <= 50)} |`,
    `| streaming ${f.streaming.tokensPerSecond} tokens/s for ${f.streaming.seconds} s: most tokens waiting for a frame | ${f.streaming.maxBacklogTokens} | no backlog | ${ok(f.streaming.lagAfterLastMs < 250)} |`,
    `| streaming: last token sent → drawn | ${f.streaming.lagAfterLastMs.toFixed(0)} ms | no backlog | ${ok(f.streaming.lagAfterLastMs < 250)} |`,
    '',
    '| first paint, part by part (ms after open; the step in brackets) | cold | warm | floor (1 step, cold) |',
    '|---|---|---|---|',
    part(
      "page created and its HTML committed (Chromium's new page stands for VS Code's webview frame; the host has been reading since the open, on a thread of its own)",
      'panel',
    ),
    part('view script started (its bundle loaded and run)', 'script', 'panel'),
    part("host: first state sent (the thread's end read from the newest checkpoints, its items built)", 'hostState'),
    part('view: first state message handled', 'state', 'script'),
    part('first frame with items', 'frame', 'state'),
  ].join('\n');
}

function cell(p: OpenParts, k: keyof OpenParts, before?: keyof OpenParts): string {
  return before ? `${p[k].toFixed(0)} (+${(p[k] - p[before]).toFixed(0)})` : p[k].toFixed(0);
}
