// The worker thread of snapshotOffThread.ts: a compaction's CPU work away from the host's thread. It
// reads the run's files as a load does (the live segment only up to the length it was given), rebuilds
// the run, checks it is the run asked for (commit `last`, `records` records), encodes the snapshot and
// hands the bytes over; the codec a load computes comes after, a piece each time it is asked for. Then
// it reads the staged file back and checks it in full. It writes nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import { RunModel } from '../core/runModel';
import { sinkInto } from '../core/loader';
import { applyChain, readSegmentFile } from './chain';
import type { CodecDelta } from './codec';
import { rel } from './commit';
import { SNAPSHOT_FILE } from './load';
import { parseSegmentNames } from './segment';
import { decodeSnapshot } from './snapshotFile';
import type { FromWorker, ToWorker } from './snapshotOffThread';
import { encodeStaged, recordCount, verifyStaged } from './snapshotStage';

/** About this many characters of the codec per message. */
const PIECE_CHARS = 256 * 1024;

type Build = Extract<ToWorker, { kind: 'build' }>;

let pieces: Iterator<FromWorker> | null = null;
let job: Build | null = null;

const post = (m: FromWorker, transfer: ArrayBuffer[] = []) => parentPort!.postMessage(m, transfer);

parentPort!.on('message', (m: ToWorker) => {
  if (m.kind === 'build') {
    job = m;
    if (m.background) yieldTheCores();
    build(m).then(
      (out) => {
        pieces = out.pieces;
        post(out.first, [out.first.bytes]);
      },
      (err: unknown) => post({ kind: 'error', phase: 'build', message: (err as Error).message }),
    );
  } else if (m.kind === 'next') {
    post(pieces?.next().value ?? { kind: 'built' });
  } else if (m.kind === 'verify') {
    try {
      verifyStaged(fs.readFileSync(m.tmp), job!.runId, job!.meta, job!.records);
      post({ kind: 'verified' });
    } catch (err) {
      post({ kind: 'error', phase: 'verify', message: (err as Error).message });
    }
  }
});

async function build(
  j: Build,
): Promise<{ first: Extract<FromWorker, { kind: 'bytes' }>; pieces: Iterator<FromWorker> }> {
  const { dir, tail } = j.files;
  const segs = parseSegmentNames(fs.readdirSync(dir)).map((s) => {
    const buf = fs.readFileSync(path.join(dir, s.name));
    return readSegmentFile(j.runId, s.name, s.first, s.name === tail?.name ? buf.subarray(0, tail.size) : buf);
  });
  const snapFile = rel(j.runId, SNAPSHOT_FILE);
  const snapPath = path.join(dir, SNAPSHOT_FILE);
  const snap = fs.existsSync(snapPath) ? decodeSnapshot(fs.readFileSync(snapPath), snapFile, j.runId) : null;
  let model: RunModel | undefined;
  const sink = sinkInto(
    () => model!,
    (meta) => (model = new RunModel(meta)),
  );
  sink.meta(j.meta);
  const chain = applyChain(j.runId, j.meta, sink, { file: snapFile, read: snap }, segs);
  if (chain.stop || chain.snapBad)
    throw new Error(`the log does not read whole: ${chain.stop?.reason ?? chain.snapBad}`);
  if (chain.next - 1 !== j.last) throw new Error(`the log holds ${chain.next - 1} commits, not ${j.last}`);
  const ops = model!.rebuildOps();
  if (recordCount(ops) !== j.records) throw new Error(`the log holds ${recordCount(ops)} records, not ${j.records}`);
  const enc = await encodeStaged(j.runId, j.meta, ops, j.last, j.end);
  const bytes = ownBuffer(enc.bytes);
  return {
    first: { kind: 'bytes', bytes, length: enc.bytes.length, header: enc.next.header, timestamp: enc.next.timestamp },
    pieces: codecPieces(enc.next),
  };
}

/** The bytes in an ArrayBuffer of their own (transferred, so never a pool's). */
function ownBuffer(b: Buffer): ArrayBuffer {
  if (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer) return b.buffer;
  const out = new ArrayBuffer(b.length);
  new Uint8Array(out).set(b);
  return out;
}

/**
 * A compaction beside the run's appends: the run's steps (and the editor) come first when the cores
 * are busy. On Linux a priority set with no pid is this thread's alone; elsewhere it would be the whole
 * process's, so not there.
 */
function yieldTheCores(): void {
  if (process.platform !== 'linux') return;
  try {
    os.setPriority(19);
  } catch {
    // (not allowed here: it runs at the host's priority)
  }
}

function* codecPieces(d: CodecDelta): Generator<FromWorker> {
  for (const map of ['outputs', 'effects', 'payloads'] as const) {
    let entries: [string, unknown][] = [];
    let chars = 0;
    for (const [k, v] of d[map] as Map<string, unknown>) {
      entries.push([k, v]);
      chars += k.length + (typeof v === 'string' ? v.length : JSON.stringify(v).length);
      if (chars >= PIECE_CHARS) {
        yield { kind: 'piece', map, entries };
        entries = [];
        chars = 0;
      }
    }
    if (entries.length > 0) yield { kind: 'piece', map, entries };
  }
}
