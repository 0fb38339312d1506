// Every scripted fault maps to the right ProviderError (or is retried away by the SDK), over real HTTP.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createProvider,
  ProviderError,
  type ProviderConfig,
  type ProviderErrorKind,
} from '../../../src/runner/provider';
import type { ChatMessage } from '../../../src/store/api/schema';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { Scenario, type Fault } from '../../fixtures/modelServer/scenario';

const messages: ChatMessage[] = [{ role: 'user', content: 'go' }];
const OK = { content: 'offline demo model: ok' };
const SECRET = 'sk-test-SECRET-0123456789';

function scenarioWith(fault: Fault | Record<string, unknown>, times?: number): Scenario {
  return Scenario.parse({
    name: 'fault',
    description: 'test',
    turns: [{ fault, ...(times ? { times } : {}), reply: times ? OK : undefined }],
  });
}

async function expectProviderError(p: Promise<unknown>, kind: ProviderErrorKind): Promise<ProviderError> {
  const err = await p.then(
    () => assert.fail(`expected a ProviderError ${kind}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ProviderError, `not a ProviderError: ${String(err)}`);
  assert.equal(err.kind, kind, err.message);
  assert.ok(!err.message.includes(SECRET), 'the API key never appears in an error');
  return err;
}

describe('runner/provider faults', () => {
  let server: ModelServer | undefined;
  const start = async (s: Scenario): Promise<ModelServer> => (server = await startModelServer({ scenario: s }));
  // Small numbers keep the suite fast: one SDK retry, short timeouts.
  const cfg = (s: ModelServer, over: Partial<ProviderConfig> = {}): ProviderConfig => ({
    baseURL: s.url,
    model: 'waypoints-demo-model',
    apiKey: SECRET,
    maxRetries: 1,
    timeoutMs: 300,
    ...over,
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('429 once with retry-after: the SDK retries and the call succeeds', async () => {
    const s = await start(scenarioWith({ kind: 'http_429', retry_after_s: 0 }, 1));
    const r = await createProvider(cfg(s)).complete({ messages });
    assert.equal(r.response.message.content, OK.content);
    assert.equal(s.stats().per_turn['main#0'], 2);
  });

  it('429 that persists → rate_limited with status 429 after the retries', async () => {
    const s = await start(scenarioWith({ kind: 'http_429', retry_after_s: 0 }));
    const e = await expectProviderError(createProvider(cfg(s)).complete({ messages }), 'rate_limited');
    assert.equal(e.status, 429);
    assert.equal(e.retryAfterMs, 0);
    assert.equal(e.retryable, true);
    assert.equal(s.requests.length, 2, '1 try + maxRetries 1');
  });

  it('500 that persists → server_error with status; once → retried away', async () => {
    const s = await start(scenarioWith({ kind: 'http_500' }));
    const e = await expectProviderError(
      createProvider(cfg(s, { maxRetries: 0 })).complete({ messages }),
      'server_error',
    );
    assert.equal(e.status, 500);
    await s.close();
    const s2 = await start(scenarioWith({ kind: 'http_500' }, 1));
    assert.equal((await createProvider(cfg(s2)).complete({ messages })).response.message.content, OK.content);
  });

  it('no answer → timeout (every attempt), and a later attempt can succeed', async () => {
    const s = await start(scenarioWith({ kind: 'timeout' }));
    await expectProviderError(createProvider(cfg(s, { timeoutMs: 150 })).complete({ messages }), 'timeout');
    assert.equal(s.requests.length, 2);
    await s.close();
    const s2 = await start(scenarioWith({ kind: 'timeout' }, 1));
    assert.equal(
      (await createProvider(cfg(s2, { timeoutMs: 150 })).complete({ messages })).response.message.content,
      OK.content,
    );
  });

  it('slow but within the timeout succeeds; slower than the timeout → timeout', async () => {
    const s = await start(
      Scenario.parse({ name: 'slow', description: 't', turns: [{ fault: { kind: 'slow', delay_ms: 50 }, reply: OK }] }),
    );
    assert.equal((await createProvider(cfg(s)).complete({ messages })).response.message.content, OK.content);
    await expectProviderError(
      createProvider(cfg(s, { timeoutMs: 20, maxRetries: 0 })).complete({ messages }),
      'timeout',
    );
  });

  for (const stream of [true, false]) {
    const mode = stream ? 'streaming' : 'non-streaming';
    it(`empty choices → empty_response (${mode})`, async () => {
      const s = await start(scenarioWith({ kind: 'empty_choices' }));
      await expectProviderError(createProvider(cfg(s, { stream })).complete({ messages }), 'empty_response');
    });
    it(`a choice without its message → bad_response (${mode})`, async () => {
      const s = await start(scenarioWith({ kind: 'missing_message' }));
      await expectProviderError(createProvider(cfg(s, { stream })).complete({ messages }), 'bad_response');
    });
    it(`malformed JSON on the wire → bad_response (${mode})`, async () => {
      const s = await start(scenarioWith({ kind: 'malformed_stream' }));
      await expectProviderError(createProvider(cfg(s, { stream })).complete({ messages }), 'bad_response');
    });
  }

  it('a stream cut before finish_reason → bad_response (not a short "complete" answer)', async () => {
    const s = await start(scenarioWith({ kind: 'truncated_stream' }));
    const e = await expectProviderError(createProvider(cfg(s)).complete({ messages }), 'bad_response');
    assert.match(e.message, /finish_reason/);
  });

  it('a stream that goes silent → timeout after timeoutMs of silence', async () => {
    const s = await start(scenarioWith({ kind: 'stall_stream' }));
    const e = await expectProviderError(createProvider(cfg(s, { timeoutMs: 200 })).complete({ messages }), 'timeout');
    assert.match(e.message, /stalled/);
  });

  it('abort while waiting → cancelled, promptly', async () => {
    const s = await start(scenarioWith({ kind: 'timeout' }));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const t0 = Date.now();
    await expectProviderError(
      createProvider(cfg(s, { timeoutMs: 10_000 })).complete({ messages, signal: ac.signal }),
      'cancelled',
    );
    assert.ok(Date.now() - t0 < 5000);
  });

  it('abort in the middle of a stream → cancelled (the SDK would end it quietly)', async () => {
    const s = await start(scenarioWith({ kind: 'stall_stream' }));
    const ac = new AbortController();
    const p = createProvider(cfg(s, { timeoutMs: 10_000 })).complete({
      messages,
      signal: ac.signal,
      onText: () => ac.abort(),
    });
    await expectProviderError(p, 'cancelled');
  });

  it('an already-aborted signal → cancelled without a request', async () => {
    const s = await start(scenarioWith({ kind: 'http_500' }));
    await expectProviderError(createProvider(cfg(s)).complete({ messages, signal: AbortSignal.abort() }), 'cancelled');
    assert.equal(s.requests.length, 0);
  });

  it('a position the scenario does not script → bad_request (HTTP 400), counted as unscripted', async () => {
    const s = await start(Scenario.parse({ name: 'one', description: 't', turns: [{ reply: OK }] }));
    const twoTurns: ChatMessage[] = [
      ...messages,
      { role: 'assistant', content: 'x' },
      { role: 'user', content: 'more' },
    ];
    const e = await expectProviderError(createProvider(cfg(s)).complete({ messages: twoTurns }), 'bad_request');
    assert.equal(e.status, 400);
    assert.equal(e.retryable, false);
    assert.equal(s.stats().unscripted, 1);
  });

  it('nothing listening → connection', async () => {
    const tmp = http.createServer();
    await new Promise<void>((r) => tmp.listen(0, '127.0.0.1', () => r()));
    const port = (tmp.address() as AddressInfo).port;
    await new Promise<void>((r) => tmp.close(() => r()));
    const p = createProvider({
      baseURL: `http://127.0.0.1:${port}/v1`,
      model: 'm',
      apiKey: SECRET,
      maxRetries: 0,
      timeoutMs: 2000,
    });
    await expectProviderError(p.complete({ messages }), 'connection');
  });

  it('401 → auth, not retryable, and the key is scrubbed even if the server echoes it', async () => {
    const echo = http.createServer((req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `bad key ${req.headers.authorization}` } }));
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (echo.address() as AddressInfo).port;
      const p = createProvider({
        baseURL: `http://127.0.0.1:${port}/v1`,
        model: 'm',
        apiKey: SECRET,
        maxRetries: 0,
        timeoutMs: 2000,
      });
      const e = await expectProviderError(p.complete({ messages }), 'auth');
      assert.equal(e.retryable, false);
      assert.match(e.message, /\*\*\*/);
    } finally {
      echo.closeAllConnections();
      await new Promise<void>((r) => echo.close(() => r()));
    }
  });
});
