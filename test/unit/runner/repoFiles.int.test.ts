// Hostile repository files through the real runner (the real openai client over real HTTP to the
// scripted server in a process of its own, the real tools, the file journal, a store on disk): files
// of 100 MB — one giant line, millions of short lines, zeros — a file at the read limit whose last
// byte is not UTF-8, ignore files of 100 MB, a command that makes a 100 MB file. Each run reads what
// the model asks, then stops for an approval and resumes. Whatever the file, the host's event loop is
// never kept busy for more than 200 ms and its memory grows by at most 4× the cap that applies; the
// model is told what happened. Generated once on tmpfs where there is one (sparse where the content
// does not matter).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEMO_MODEL_ID, type Scenario } from '../../fixtures/modelServer/scenario';
import { MAX_READ_BYTES } from '../../../src/runner/tools/fsTools';
import { DEFAULT_MAX_KEPT_BYTES } from '../../../src/runner/fileJournal/versions';
import { createCodingRegistry, createFileFinder, type FileFinder } from '../../../src/runner/tools';
import { fileLimits } from '../../../src/runner/tools/finder/types';
import { MAX_CONFIG_BYTES, parseMcpJson, readConfigFile } from '../../../src/runner/mcp/config';
import { parseEnvFile } from '../../../src/runner/mcp/launch';
import { MAX_JSON_DEPTH } from '../../../src/common/jsonBounds';
import { parsePorcelainZ, repoBefore } from '../../../src/runner/fileJournal/git';
import { git } from './files/journalSupport';
import { StallSampler, mb, type StallReport } from '../../support/stallSampler';
import { startModelServerProcess, type ModelServerProcess } from '../../support/modelServerProcess';
import { ripgrepForTests } from '../../support/ripgrep';
import { makeRunner } from '../loop/support';

const MAX_STALL_MS = 200;
const MB = 1024 * 1024;
const HUNDRED_MB = 100 * MB;
const LINE = 'a short line of text\n';
/** As many lines as fit in 100 MB. */
const LINES = Math.floor(HUNDRED_MB / LINE.length);
/** The cap on what a file tool holds of one file. */
const READ_GROWTH = 4 * MAX_READ_BYTES;
/** The cap on what the file journal keeps of one file. */
const KEPT_GROWTH = 4 * DEFAULT_MAX_KEPT_BYTES;

const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();

type Call = { name: string; arguments: Record<string, unknown> };

function assertBounded(r: StallReport, what: string, maxGrowth: number, maxStall = MAX_STALL_MS): void {
  assert.ok(r.maxStallMs <= maxStall, `${what}: the event loop was busy for ${r.maxStallMs.toFixed(0)} ms`);
  assert.ok(r.peakGrowthBytes <= maxGrowth, `${what}: memory grew by ${mb(r.peakGrowthBytes)}`);
}

/** Writes `size` bytes made of `line` repeated (then `tail`), about a megabyte of whole lines per write. */
function writeRepeated(file: string, line: string, size: number, tail = ''): void {
  const unit = Buffer.from(line.repeat(Math.floor(MB / line.length)));
  const fd = fs.openSync(file, 'w');
  try {
    let left = size - Buffer.byteLength(tail);
    while (left > 0) left -= fs.writeSync(fd, unit, 0, Math.min(unit.length, left));
    fs.writeSync(fd, tail);
  } finally {
    fs.closeSync(fd);
  }
}

describe('hostile repository files are bounded: the host neither stalls nor fills up, and the run resumes', function () {
  this.timeout(120_000);
  let cache: string;
  const made: string[] = [];
  const file = (name: string): string => path.join(cache, name);

  before(async () => {
    cache = fs.mkdtempSync(path.join(base, 'aw-repofiles-'));
    // 100 MB of short lines (5 million of them).
    writeRepeated(file('lines.txt'), LINE, LINES * LINE.length);
    // One line of 100 MB, with the word to find at its end.
    writeRepeated(file('oneline.txt'), 'a', HUNDRED_MB, 'needle');
    // At the read limit, valid UTF-8 up to its very last byte.
    writeRepeated(file('limit.txt'), 'text ', MAX_READ_BYTES - 1);
    fs.appendFileSync(file('limit.txt'), Buffer.from([0xff]));
    // 100 MB of zeros, sparse.
    fs.writeFileSync(file('zeros.bin'), '');
    fs.truncateSync(file('zeros.bin'), HUNDRED_MB);
    // An ignore file of 100 MB: a million and more globs.
    writeRepeated(file('ignore'), '*.generated-by-a-tool\n', HUNDRED_MB);
    // Not the input's cost, so done before anything is measured: loading the runner's modules, the
    // shell grammar and the tokenizer, and a first pass through each tool, both engines and an approval.
    const small = workspace({}, { 'a.txt': 'a\n', 'sub/.gitignore': '*.log\n' });
    const warmCalls = [
      { name: 'read_file', arguments: { path: 'a.txt', start_line: 1 } },
      { name: 'edit_file', arguments: { path: 'a.txt', old_text: 'a', new_text: 'b' } },
      { name: 'write_file', arguments: { path: 'b.txt', content: 'b' } },
      { name: 'list_files', arguments: { path: 'sub' } },
      { name: 'search_text', arguments: { pattern: 'b' } },
    ];
    await hostileRun(small, warmCalls, { finder: ripgrep(), measure: false });
    await hostileRun(small, warmCalls, { finder: node(), measure: false });
  });
  after(() => {
    for (const d of made) fs.rmSync(d, { recursive: true, force: true });
    fs.rmSync(cache, { recursive: true, force: true });
  });

  /** A workspace (and a store next to it) with copies of the named files (workspace path → cached name). */
  function workspace(files: Record<string, string>, extra: Record<string, string> = {}): string {
    const dir = fs.mkdtempSync(path.join(base, 'aw-repofiles-ws-'));
    made.push(dir);
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    for (const [rel, name] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
      fs.copyFileSync(file(name), path.join(ws, rel));
    }
    for (const [rel, text] of Object.entries(extra)) {
      fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
      fs.writeFileSync(path.join(ws, rel), text);
    }
    return ws;
  }

  const ripgrep = (): FileFinder => createFileFinder({ ripgrepPath: ripgrepForTests() });
  const node = (): FileFinder => createFileFinder();

  /**
   * Runs `calls` in one answer, then a command that waits for approval; approves it and lets the run
   * finish. Both executions are sampled. Returns what each call told the model.
   */
  async function hostileRun(
    ws: string,
    calls: Call[],
    o: { finder?: FileFinder; maxGrowth?: number; command?: string; measure?: boolean } = {},
  ): Promise<string[]> {
    const scenario: Scenario = {
      name: 'repo-files',
      description: 'offline demo model: tools over hostile repository files',
      model: DEMO_MODEL_ID,
      subconversations: [],
      turns: [
        ...(calls.length > 0 ? [{ reply: { content: null, tool_calls: calls } }] : []),
        {
          reply: { content: null, tool_calls: [{ name: 'run_command', arguments: { command: o.command ?? 'true' } }] },
        },
        { reply: { content: 'Done.' } },
      ],
    };
    const srv = await startModelServerProcess(scenario);
    try {
      return await sampledRun(srv, ws, o);
    } finally {
      await srv.close();
    }
  }

  async function sampledRun(
    srv: ModelServerProcess,
    ws: string,
    o: { finder?: FileFinder; maxGrowth?: number; measure?: boolean },
  ): Promise<string[]> {
    const t = makeRunner({
      baseURL: srv.url,
      workspace: ws,
      storeDir: path.join(path.dirname(ws), 'store'),
      policy: { categories: { read: 'auto', write: 'auto', command: 'ask', subagent: 'auto' } },
      deps: { tools: createCodingRegistry({ files: o.finder ?? node() }) },
    });
    const maxGrowth = o.measure === false ? Infinity : (o.maxGrowth ?? READ_GROWTH);
    const stall = o.measure === false ? Infinity : MAX_STALL_MS;
    const first = await StallSampler.during(async () => {
      const h = await t.runner.start({ task: 'look at the repository' });
      return { runId: h.runId, out: await h.done };
    });
    const { runId, out } = first.result;
    assert.equal(out.state, 'awaiting_approval', out.detail ?? '');
    assertBounded(first.report, 'the run', maxGrowth, stall);

    const [approval] = await t.store.listApprovals(runId, { pendingOnly: true });
    const resumed = await StallSampler.during(async () => {
      const r = await t.runner.decideApprovals(runId, [
        { kind: 'approve', toolCallId: approval!.tool_call_id, inputHash: approval!.input_hash },
      ]);
      return r!.done;
    });
    assert.equal(resumed.result.state, 'completed', resumed.result.detail ?? '');
    assertBounded(resumed.report, 'the resumed run', maxGrowth, stall);
    const requests = await srv.requests();
    return (requests[1]?.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content ?? ''));
  }

  it('read_file of 100 MB: whole is refused; a range at the end of 5 million lines, a range of one giant line, zeros', async () => {
    const ws = workspace({ 'lines.txt': 'lines.txt', 'oneline.txt': 'oneline.txt', 'zeros.bin': 'zeros.bin' });
    const told = await hostileRun(ws, [
      { name: 'read_file', arguments: { path: 'lines.txt' } },
      { name: 'read_file', arguments: { path: 'lines.txt', start_line: LINES - 1 } },
      { name: 'read_file', arguments: { path: 'oneline.txt', start_line: 1, end_line: 1 } },
      { name: 'read_file', arguments: { path: 'zeros.bin', start_line: 1 } },
    ]);
    assert.match(told[0]!, /is 104857599 bytes, over the 10485760-byte read limit; read a line range instead/);
    assert.equal(told[1], 'a short line of text\na short line of text\n');
    assert.match(told[2]!, /^a{1000}/);
    assert.match(told[2]!, /output truncated: 32768 of \d+ bytes shown; full output in blob/);
    assert.match(told[3]!, /looks like a binary file/);
  });

  it('read_file and edit_file of a file at the read limit whose last byte is not UTF-8: refused, naming the line', async () => {
    const ws = workspace({ 'limit.txt': 'limit.txt' });
    const told = await hostileRun(ws, [
      { name: 'read_file', arguments: { path: 'limit.txt' } },
      { name: 'edit_file', arguments: { path: 'limit.txt', old_text: 'text', new_text: 'word' } },
    ]);
    assert.match(told[0]!, /is not valid UTF-8 \(byte 0xFF on line 1 /);
    assert.match(told[1]!, /is not valid UTF-8 .*edit_file edits UTF-8 text only; the file was not changed/);
  });

  it('edit_file at the read limit: 160,000 matches replaced; not found, looked for without whitespace', async () => {
    const line = `text ${'.'.repeat(58)}\n`;
    const ws = workspace({}, { 'words.txt': line.repeat(MAX_READ_BYTES / 64) });
    const told = await hostileRun(
      ws,
      [
        { name: 'edit_file', arguments: { path: 'words.txt', old_text: 'absent\n\ttext', new_text: 'x' } },
        { name: 'edit_file', arguments: { path: 'words.txt', old_text: 'text', new_text: 'word', replace_all: true } },
      ],
      { maxGrowth: KEPT_GROWTH },
    );
    assert.match(told[0]!, /old_text was not found in words\.txt/);
    assert.match(told[1]!, /replaced 163840 occurrences \(first at line 1\)/);
    const edited = fs.readFileSync(path.join(ws, 'words.txt'), 'latin1');
    assert.ok(edited === line.replace('text', 'word').repeat(MAX_READ_BYTES / 64), 'every one replaced');
  });

  it('write_file over a 100 MB file: judged by its start, its earlier version hashed as a stream', async () => {
    const ws = workspace({ 'oneline.txt': 'oneline.txt', 'lines.txt': 'lines.txt' });
    const told = await hostileRun(
      ws,
      [
        { name: 'write_file', arguments: { path: 'oneline.txt', content: 'short now\n' } },
        { name: 'edit_file', arguments: { path: 'lines.txt', old_text: 'a short', new_text: 'b' } },
      ],
      { maxGrowth: KEPT_GROWTH },
    );
    assert.match(told[0]!, /^Overwrote oneline\.txt \(10 bytes\)/);
    assert.match(told[1]!, /is 104857599 bytes, over the 10485760-byte limit of edit_file/);
  });

  it('search_text (ripgrep) finding a word at the end of one 100 MB line, and in 5 million short lines', async () => {
    const ws = workspace({ 'oneline.txt': 'oneline.txt', 'lines.txt': 'lines.txt' });
    const told = await hostileRun(
      ws,
      [
        { name: 'search_text', arguments: { pattern: 'needle' } },
        { name: 'search_text', arguments: { pattern: 'short', path: 'lines.txt', max_results: 500 } },
      ],
      { finder: ripgrep() },
    );
    assert.match(
      told[0]!,
      /^No matches .*\n.*oneline\.txt: a matching line over 1048576 characters is not shown \(read_file reads it in a line range\)/,
    );
    assert.match(told[1]!, /^lines\.txt:500: a short line of text\n\[matches 1–500 shown; more follow/m);
  });

  it('search_text (node) on a 100 MB line and 5 million short lines: each skipped by size, and said so', async () => {
    const ws = workspace({ 'oneline.txt': 'oneline.txt', 'lines.txt': 'lines.txt' }, { 'a.txt': 'a needle\n' });
    const told = await hostileRun(ws, [{ name: 'search_text', arguments: { pattern: 'needle' } }], { finder: node() });
    assert.match(told[0]!, /^a\.txt:1: a needle/);
    assert.match(
      told[0]!,
      /oneline\.txt: not searched \(104857\d+ bytes; the built-in search reads files up to 16777216 bytes\)/,
    );
    assert.match(told[0]!, /lines\.txt: not searched/);
  });

  for (const [engine, finder] of [
    ['ripgrep', ripgrep],
    ['node', node],
  ] as const)
    it(`list_files and search_text (${engine}) below a .gitignore, an .ignore and a .git/info/exclude of 100 MB each`, async () => {
      // ripgrep reads every ignore file whole, in its own process, for longer than the deadline.
      const deadline = fileLimits.deadlineMs;
      if (engine === 'ripgrep') fileLimits.deadlineMs = 3000;
      let told: string[];
      try {
        const ws = workspace(
          { '.gitignore': 'ignore', 'sub/.ignore': 'ignore', '.git/info/exclude': 'ignore' },
          {
            'sub/a.txt': 'found me\n',
            'sub/b.generated-by-a-tool': 'found me\n',
            '.git/HEAD': 'ref: refs/heads/main\n',
          },
        );
        told = await hostileRun(
          ws,
          [
            { name: 'list_files', arguments: { path: 'sub' } },
            { name: 'search_text', arguments: { pattern: 'found' } },
          ],
          { finder: finder() },
        );
      } finally {
        fileLimits.deadlineMs = deadline;
      }
      if (engine === 'ripgrep') {
        assert.match(told[0]!, /stopped after 3 s with 0 files/);
        assert.match(told[1]!, /search_text stopped after 3 s/);
      } else {
        // The start of each ignore file applies: b.generated-by-a-tool is ignored.
        assert.match(told[0]!, /^\.ignore\na\.txt\n\[also in "sub", not listed: b\.generated-by-a-tool — ignored/);
        // The ignore files themselves are over the built-in search's file size: skipped, and said so.
        assert.match(told[1]!, /^sub\/a\.txt:1: found me\n\[2 problems while searching.*\.gitignore: not searched/);
      }
    });

  it('a command that writes a 100 MB file: the file journal hashes it as a stream after the run resumes', async () => {
    const ws = workspace({}, { 'small.txt': 'small\n' });
    await hostileRun(ws, [], { command: `head -c ${HUNDRED_MB} /dev/zero > made.bin`, maxGrowth: KEPT_GROWTH });
    assert.equal(fs.statSync(path.join(ws, 'made.bin')).size, HUNDRED_MB);
  });
});

describe('hostile MCP configuration in the workspace is bounded: .vscode/mcp.json and an envFile', () => {
  const ctx = { source: 'workspace', label: '.vscode/mcp.json', workspaceFolder: '/ws', userHome: '/home/u' } as const;
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(base, 'aw-repofiles-mcp-'));
    writeRepeated(path.join(dir, 'mcp.json'), '{"servers": {}}\n', HUNDRED_MB);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a file of 100 MB is not read, and says so', async () => {
    const { result, report } = await StallSampler.during(() =>
      readConfigFile(path.join(dir, 'mcp.json')).then(
        () => 'read',
        (e: Error) => e.message,
      ),
    );
    assert.equal(result, `is larger than ${MAX_CONFIG_BYTES} bytes; not read`);
    assertBounded(report, 'mcp.json of 100 MB', 4 * MAX_CONFIG_BYTES);
  });

  it('nested 100,000 deep: a clear error, not a stack overflow', async () => {
    const text = `{"servers": {"a": {"command": "x", "args": ${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`;
    const { result, report } = await StallSampler.during(async () => parseMcpJson(text, ctx));
    assert.deepEqual(result.errors, [`.vscode/mcp.json: nests more than ${MAX_JSON_DEPTH} levels deep`]);
    assertBounded(report, 'deep mcp.json', 4 * MAX_CONFIG_BYTES);
  });

  it('an envFile line with a long run of spaces is read in linear time, comments still cut', async () => {
    const text = `A=x${' '.repeat(MAX_CONFIG_BYTES - 100)}y\nB=1 # note\nC=#not a comment\n`;
    const { result, report } = await StallSampler.during(async () => parseEnvFile(text));
    assert.equal(result.A, `x${' '.repeat(MAX_CONFIG_BYTES - 100)}y`);
    assert.equal(result.B, '1');
    assert.equal(result.C, '#not a comment');
    assertBounded(report, 'envFile', 4 * MAX_CONFIG_BYTES);
  });
});

describe("a hostile .git/index is not read on the host's thread", () => {
  it("git status's answer listing 1.4 million entries is read a piece at a time, and refused past 200,000", async () => {
    const count = 1_400_000;
    const out = Buffer.from(
      Array.from({ length: count }, (_, i) => `AD f${String(i).padStart(7, '0')}\0`).join('') + 'R  new\0old\0',
      'latin1',
    );
    const { result, report } = await StallSampler.during(() => parsePorcelainZ(out));
    assert.equal(result, null, 'more entries than any real change: git cannot tell about this repository');
    const few = await parsePorcelainZ(out.subarray(out.length - 2 * 12 - 11));
    assert.deepEqual([...few!], ['f1399998', 'f1399999', 'new', 'old']);
    // The paths it holds are the answer's own size again, a few times over as strings and a set.
    assertBounded(report, 'a 1.4 million-entry git status', 8 * out.length);
  });

  it('an index of 100 MB is left to git status', async function () {
    this.timeout(60_000);
    const ws = fs.mkdtempSync(path.join(base, 'aw-repofiles-git-'));
    try {
      fs.writeFileSync(path.join(ws, 'a.txt'), 'a\n');
      git(ws, 'init', '-q');
      git(ws, 'add', '-A');
      git(ws, 'commit', '-qm', 'initial');
      // Version 2 entries of 72 bytes (a regular file's mode, an 8-byte name), then an optional extension
      // (a signature git does not know, upper-case first: skipped) filling it to 100 MB, and no checksum
      // (index.skipHash). Its size is what sends it to git status; what git then does with many entries
      // is the test above.
      const count = 1000;
      const pad = HUNDRED_MB - (12 + count * 72 + 8 + 20);
      const index = Buffer.alloc(12 + count * 72 + 8 + pad + 20);
      index.write('DIRC', 0, 'latin1');
      index.writeUInt32BE(2, 4);
      index.writeUInt32BE(count, 8);
      let at = 12;
      for (let i = 0; i < count; i++, at += 72) {
        index.writeUInt32BE(0o100644, at + 24);
        index.writeUInt16BE(8, at + 60);
        index.write(`f${String(i).padStart(7, '0')}`, at + 62, 'latin1');
      }
      index.write('ZPAD', at, 'latin1');
      index.writeUInt32BE(pad, at + 4);
      fs.writeFileSync(path.join(ws, '.git', 'index'), index);
      const { result, report } = await StallSampler.during(() => repoBefore(ws, ''));
      // git status answers (it read the index): never the index read here.
      assert.equal(result?.kind, 'status', 'left to git status');
      // Its entries, none on disk, and a.txt, committed but not in this index.
      assert.equal(result.kind === 'status' && result.dirty.size, count + 1, "git read the index's entries");
      assertBounded(report, 'a 100 MB index', 4 * 16 * MB);
    } finally {
      fs.rmSync(ws, { recursive: true, force: true });
    }
  });
});
