// Seeded randomness and source-like text for the workload. Tool results are code-shaped text
// (newlines, quotes, braces) rather than repeated letters so that JSON escaping costs what it
// costs on real transcripts.
export type Rng = () => number;

/** mulberry32: tiny, fast, good enough for a workload generator; same sequence on every machine. */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'const',
  'let',
  'return',
  'await',
  'async',
  'function',
  'export',
  'import',
  'from',
  'if',
  'else',
  'for',
  'of',
  'orders',
  'cursor',
  'limit',
  'offset',
  'page',
  'items',
  'total',
  'request',
  'response',
  'db',
  'query',
  'row',
  'OrderRow',
  'Pagination',
  'parseInt',
  'JSON.stringify',
  'res.status(200)',
  'next',
  'err',
  'null',
  'undefined',
  '=>',
  '===',
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  ';',
  ',',
  '"id"',
  '"created_at"',
  "'asc'",
  "'desc'",
  '// TODO',
  '+',
  '-',
];

/** A pool of lines built once per seed, then sampled: generating 10 MB stays fast. */
const linePools = new WeakMap<Rng, string[]>();

function pool(rng: Rng): string[] {
  let lines = linePools.get(rng);
  if (!lines) {
    lines = [];
    for (let i = 0; i < 4096; i++) {
      const indent = '  '.repeat(Math.floor(rng() * 4));
      const n = 3 + Math.floor(rng() * 12);
      const words: string[] = [];
      for (let w = 0; w < n; w++) words.push(WORDS[Math.floor(rng() * WORDS.length)]!);
      lines.push(indent + words.join(' '));
    }
    linePools.set(rng, lines);
  }
  return lines;
}

/** About `chars` characters (ASCII, so bytes too) of code-like text, drawn from `rng`. */
export function codeText(rng: Rng, chars: number): string {
  const lines = pool(rng);
  const out: string[] = [];
  let len = 0;
  while (len < chars) {
    const line = lines[Math.floor(rng() * lines.length)]!;
    out.push(line);
    len += line.length + 1;
  }
  return out.join('\n').slice(0, chars);
}
