// A large message from an MCP server (a result of up to 100 MB) is parsed on a worker thread: on
// the host's main thread its copying, decoding, JSON.parse and hashing would block the event loop
// for seconds. It reaches the worker piece by piece as it arrives; the worker hands back what the host
// needs, as bytes it transfers (no copy): for a tool's result, the text the model reads (result.ts
// resultText, the same rules) and the result exactly as the server sent it, each with its sha256;
// for an error, its code and bounded message; for any other answer, the message itself.
import { Worker } from 'node:worker_threads';

export type Parsed =
  | {
      kind: 'call';
      id: string | number;
      text: Uint8Array;
      raw: Uint8Array;
      isError: boolean;
      /** sha256 of each, taken on the worker (the store's blob names). */
      textHash: string;
      rawHash: string;
    }
  | { kind: 'error'; id: string | number; code: number; message: string; data?: unknown }
  | { kind: 'message'; message: unknown }
  | { kind: 'ignored'; what: string }
  | { kind: 'invalid'; reason: string };

/**
 * Self-contained (the extension is one bundle). partText/modelText follow result.ts resultText
 * rule for rule (a test holds them equal); resultRange finds the bytes of the top-level `result`.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const size = (b64) => {
  const bytes = Math.floor((b64.replace(/=+$/, '').length * 3) / 4);
  return bytes < 1024 ? bytes + ' B' : (bytes / 1024).toFixed(1) + ' KB';
};
function partText(p) {
  const type = p && typeof p === 'object' ? p.type : undefined;
  switch (type) {
    case 'text': return String(p.text);
    case 'image': case 'audio':
      return '[' + type + ' ' + p.mimeType + ', ' + size(String(p.data ?? '')) + ': shown to the user in the tool card]';
    case 'resource': {
      const r = p.resource ?? {};
      const mime = r.mimeType ? ' (' + r.mimeType + ')' : '';
      if (typeof r.text === 'string') return '[resource ' + r.uri + mime + ']\\n' + r.text;
      return '[resource ' + r.uri + mime + ', ' + size(String(r.blob ?? '')) + ']';
    }
    case 'resource_link':
      return '[resource link ' + p.name + ': ' + p.uri + (p.description ? ' — ' + p.description : '') + ']';
    default: return '[' + type + ' content]';
  }
}
function modelText(r) {
  const content = Array.isArray(r.content) ? r.content : [];
  const parts = content.map(partText);
  const hasText = content.some((p) => p && p.type === 'text');
  if (r.structuredContent !== undefined && !hasText) parts.push(JSON.stringify(r.structuredContent, null, 2));
  const text = parts.join('\\n');
  return text === '' ? (r.isError === true ? 'The tool reported an error without a message.' : '(no content)') : text;
}
const ws = (b, i) => { while (b[i] === 32 || b[i] === 9 || b[i] === 10 || b[i] === 13) i++; return i; };
function skipString(b, i) {
  for (i++; b[i] !== 34; i++) if (b[i] === 92) i++;
  return i + 1;
}
function skipValue(b, i) {
  if (b[i] === 34) return skipString(b, i);
  if (b[i] !== 123 && b[i] !== 91) { while (i < b.length && b[i] !== 44 && b[i] !== 125 && b[i] !== 93) i++; return i; }
  for (let depth = 0; ; ) {
    const c = b[i];
    if (c === 34) { i = skipString(b, i); continue; }
    if (c === 123 || c === 91) depth++;
    else if ((c === 125 || c === 93) && --depth === 0) return i + 1;
    i++;
  }
}
/** The byte range of the top-level "result" value (the text is valid JSON: JSON.parse read it). */
function resultRange(b) {
  let i = ws(b, 0) + 1;
  for (;;) {
    i = ws(b, i);
    if (b[i] !== 34) return null;
    const k = i;
    i = skipString(b, i);
    const key = JSON.parse(Buffer.from(b.buffer, b.byteOffset + k, i - k).toString('utf8'));
    i = ws(b, ws(b, i) + 1);
    const start = i;
    i = skipValue(b, i);
    if (key === 'result') return [start, i];
    i = ws(b, i);
    if (b[i] === 44) i++;
  }
}
function small(data) {
  if (data === undefined) return undefined;
  const json = JSON.stringify(data);
  return json !== undefined && json.length <= 1000 ? data : { left_out: json === undefined ? 0 : json.length };
}
function handle(job) {
  const b = job.bytes;
  const msg = JSON.parse(Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8'));
  if (!msg || typeof msg !== 'object' || Array.isArray(msg) || msg.jsonrpc !== '2.0')
    return { kind: 'invalid', reason: 'not a JSON-RPC message' };
  if ('method' in msg || !('id' in msg)) return { kind: 'ignored', what: String(msg.method ?? 'a message without an id') };
  if (msg.error && typeof msg.error === 'object') {
    const m = String(msg.error.message ?? '');
    return { kind: 'error', id: msg.id, code: Number(msg.error.code), message: m.length > 4000 ? m.slice(0, 4000) + '… (' + m.length + ' characters)' : m, data: small(msg.error.data) };
  }
  const r = msg.result;
  if (!r || typeof r !== 'object' || Array.isArray(r)) return { kind: 'invalid', reason: 'an answer without a result object' };
  if (new Map(job.asked).get(msg.id) !== 'tools/call') {
    if (b.length <= job.maxOther) return { kind: 'message', message: msg };
    return { kind: 'error', id: msg.id, code: -32603, message: 'its answer was too large for the host to take (' + Math.round(b.length / 1048576) + ' MB)', data: { 'agent-waypoints/host-error': true } };
  }
  const range = resultRange(b);
  const raw = range ? b.subarray(range[0], range[1]) : new TextEncoder().encode(JSON.stringify(r));
  return { kind: 'call', id: msg.id, isError: r.isError === true, text: new TextEncoder().encode(modelText(r)), raw };
}
const crypto = require('node:crypto');
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');
const open = new Map();
// A message is gathered in one buffer that grows in place up to the most the host reads (a resizable
// ArrayBuffer: its memory is taken only as it grows), and each piece is let go once copied; so the
// bytes are held once, not as pieces and then a joined copy of them.
parentPort.on('message', (m) => {
  if (m.kind === 'chunk') {
    const into = open.get(m.id);
    if (!into) return;
    const n = Math.min(m.bytes.byteLength, into.max - into.bytes.byteLength);
    const at = into.bytes.byteLength;
    into.bytes.resize(at + n);
    new Uint8Array(into.bytes, at, n).set(m.bytes.subarray(0, n));
    return;
  }
  if (m.kind === 'begin') return void open.set(m.id, { bytes: new ArrayBuffer(0, { maxByteLength: m.max }), max: m.max });
  const into = open.get(m.id);
  open.delete(m.id);
  if (m.kind !== 'end' || !into) return;
  let out;
  try { out = handle({ ...m, bytes: Buffer.from(into.bytes) }); } catch (e) { out = { kind: 'invalid', reason: String((e && e.message) || e).slice(0, 500) }; }
  const transfer = [];
  if (out.kind === 'call') {
    out.textHash = sha(out.text);
    out.rawHash = sha(out.raw);
    transfer.push(out.text.buffer);
    if (out.raw.buffer !== out.text.buffer) transfer.push(out.raw.buffer);
  }
  parentPort.postMessage({ id: m.id, out }, transfer);
});
`;

let worker: Worker | null = null;
let jobs = 0;
const waiting = new Map<number, { resolve(p: Parsed): void; reject(e: Error): void }>();

function start(): Worker {
  if (worker) return worker;
  const w = new Worker(WORKER_SOURCE, { eval: true });
  w.unref(); // referenced only while a job waits
  w.on('message', (m: { id: number; out: Parsed }) => {
    waiting.get(m.id)?.resolve(m.out);
    waiting.delete(m.id);
    if (waiting.size === 0) w.unref();
  });
  const lost = (err: Error) => {
    if (worker === w) worker = null;
    for (const p of waiting.values()) p.reject(err);
    waiting.clear();
  };
  w.on('error', lost);
  w.on('exit', (code) => lost(new Error(`the parsing thread exited (${code})`)));
  return (worker = w);
}

/** A message streamed to the worker piece by piece as it arrives: no large copy on the main thread. */
export interface LargeMessage {
  add(piece: Uint8Array): void;
  /** All of it came: the worker parses it. `asked`: the requests waiting for an answer (id, method). */
  end(asked: readonly [string | number, string][], maxOther: number): Promise<Parsed>;
  /** It is not wanted after all (over the limit): the worker forgets it. */
  drop(): void;
}

export function streamLarge(maxBytes: number): LargeMessage {
  const w = start();
  const id = ++jobs;
  w.postMessage({ kind: 'begin', id, max: maxBytes });
  return {
    add(piece) {
      const copy = new Uint8Array(piece); // its own memory, moved to the worker (a view would clone its whole buffer)
      w.postMessage({ kind: 'chunk', id, bytes: copy }, [copy.buffer]);
    },
    end(asked, maxOther) {
      return new Promise<Parsed>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        w.ref();
        w.postMessage({ kind: 'end', id, asked, maxOther });
      });
    },
    drop() {
      w.postMessage({ kind: 'drop', id });
    },
  };
}
