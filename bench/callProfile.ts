// `bench:calls --profile`: V8's sampling profiler over the whole run (node:inspector, in this
// process), then only the samples taken while one of ours' counted calls ran, by where the time was
// spent itself (self time): per source file, and the functions that took the most.
import inspector from 'node:inspector';
import path from 'node:path';

export type Profile = inspector.Profiler.Profile;

/** A store call's span, in µs of the monotonic clock the profiler stamps its samples with. */
export type Span = [startUs: number, endUs: number];

export const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

export class CallProfiler {
  private readonly session = new inspector.Session();

  private post<T>(method: string, params?: object): Promise<T> {
    return new Promise((resolve, reject) =>
      this.session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res as T))),
    );
  }

  async start(intervalUs: number): Promise<void> {
    this.session.connect();
    await this.post('Profiler.enable');
    await this.post('Profiler.setSamplingInterval', { interval: intervalUs });
    await this.post('Profiler.start');
  }

  async stop(): Promise<Profile> {
    const { profile } = await this.post<{ profile: Profile }>('Profiler.stop');
    this.session.disconnect();
    return profile;
  }
}

export interface SelfTime {
  samples: number;
  byFile: [string, number][];
  byFunction: [string, number][];
}

/** Where a frame's code is: a path under the repository, a Node module, or what V8 calls it. */
function placeOf(url: string, root: string): string {
  if (url === '') return '(native)';
  const file = url.startsWith('file://') ? new URL(url).pathname : url;
  return path.isAbsolute(file) ? path.relative(root, file) : file;
}

/**
 * The self time of the samples that fall inside `spans`, as shares of them (descending); with
 * `inclusive`, a function's share counts every sample it is on the stack of (once, however deep) —
 * what it and what it calls cost, as far as the stack reaches (an await cuts it: the code after one
 * runs under the microtask queue, not under its caller).
 */
export function selfTimeIn(profile: Profile, spans: readonly Span[], root: string, inclusive = false): SelfTime {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parents = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parents.set(c, n.id);
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let inSpans = 0;
  let t = profile.startTime;
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    t += deltas[i] ?? 0;
    // The last span that starts at or before t (searched each time: a delta can be negative).
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]![0] <= t) lo = mid + 1;
      else hi = mid;
    }
    const span = sorted[lo - 1];
    if (!span || t > span[1]) continue;
    if (!nodes.get(samples[i]!)) continue;
    inSpans++;
    const files = new Set<string>();
    const fns = new Set<string>();
    for (let id: number | undefined = samples[i]; id !== undefined; id = inclusive ? parents.get(id) : undefined) {
      const frame = nodes.get(id)!.callFrame;
      const place = placeOf(frame.url, root);
      files.add(place);
      // (no line: tsx runs each file as one transpiled line, so the profiler's lines say nothing)
      fns.add(`${frame.functionName || '(anonymous)'} (${place})`);
    }
    for (const place of files) byFile.set(place, (byFile.get(place) ?? 0) + 1);
    for (const fn of fns) byFunction.set(fn, (byFunction.get(fn) ?? 0) + 1);
  }
  const shares = (m: Map<string, number>): [string, number][] =>
    [...m].map(([k, v]): [string, number] => [k, inSpans ? v / inSpans : 0]).sort((a, b) => b[1] - a[1]);
  return { samples: inSpans, byFile: shares(byFile), byFunction: shares(byFunction) };
}
