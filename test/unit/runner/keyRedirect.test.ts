// Keys never leave their origin, redirects included: the real provider (the openai client over real
// HTTP) against a server on 127.0.0.1 that answers with a redirect — to a second server on
// `localhost` (another origin), which counts every request and every copy of the key it receives,
// or to a path of its own origin, which it serves from the scripted model server (that one refuses
// a request without the key).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProvider, ProviderError, type ProviderConfig } from '../../../src/runner/provider';
import { checkConnection } from '../../../src/runner/provider/check';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../fixtures/modelServer/scenario';
import { makeRunner } from '../loop/support';

const KEY = 'sk-redirect-secret-4242';
const scenario: Scenario = {
  name: 'redirect',
  description: 'offline demo model: redirect',
  model: DEMO_MODEL_ID,
  turns: [{ reply: { content: 'Answered where the key belongs.' } }],
  subconversations: [],
};

interface Listening {
  server: http.Server;
  port: number;
}

async function listen(handler: http.RequestListener): Promise<Listening> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

const close = (l: Listening): Promise<void> =>
  new Promise((resolve) => {
    l.server.closeAllConnections();
    l.server.close(() => resolve());
  });

describe('keys never leave their origin, redirects included', function () {
  this.timeout(60_000);
  let model: ModelServer;
  let elsewhere: Listening;
  let origin: Listening;
  /** What the other origin received: requests, and requests that carried the key in any header. */
  const received = { requests: 0, withKey: 0 };
  let redirect: 'cross' | 'same' = 'cross';
  let originRequests = 0;

  before(async () => {
    model = await startModelServer({ scenario, apiKey: KEY });
    // Another origin that would answer anything: were a request to arrive, it would succeed.
    elsewhere = await listen((req, res) => {
      received.requests += 1;
      if (Object.values(req.headers).some((v) => String(v).includes(KEY))) received.withKey += 1;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          req.url?.includes('/models')
            ? { object: 'list', data: [{ id: DEMO_MODEL_ID, object: 'model', created: 0, owned_by: 'elsewhere' }] }
            : {
                id: 'chatcmpl-elsewhere',
                object: 'chat.completion',
                created: 0,
                model: DEMO_MODEL_ID,
                choices: [{ index: 0, message: { role: 'assistant', content: 'elsewhere' }, finish_reason: 'stop' }],
              },
        ),
      );
    });
    // The key's origin: redirects everything under /v1, and serves /moved/v1/… from the model server.
    origin = await listen((req, res) => {
      originRequests += 1;
      const url = req.url ?? '/';
      if (url.startsWith('/moved/')) {
        const forward = http.request(
          {
            host: '127.0.0.1',
            port: model.port,
            path: url.slice('/moved'.length),
            method: req.method,
            headers: req.headers,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        req.pipe(forward);
        return;
      }
      req.resume();
      const to = redirect === 'cross' ? `http://localhost:${elsewhere.port}${url}` : `/moved${url}`;
      res.writeHead(307, { location: to });
      res.end();
    });
  });
  beforeEach(() => {
    received.requests = received.withKey = originRequests = 0;
    redirect = 'cross';
    model.reset();
  });
  after(async () => {
    await Promise.all([close(origin), close(elsewhere), model.close()]);
  });

  const cfg = (o: Partial<ProviderConfig>): ProviderConfig => ({
    baseURL: `http://127.0.0.1:${origin.port}/v1`,
    model: DEMO_MODEL_ID,
    apiKey: KEY,
    maxRetries: 0,
    timeoutMs: 5000,
    ...o,
  });
  const names = (e: unknown): true => {
    assert.ok(e instanceof ProviderError, String(e));
    assert.equal(e.kind, 'bad_request');
    assert.equal(e.status, 307);
    assert.ok(e.message.includes(`http://127.0.0.1:${origin.port}`), e.message);
    assert.ok(e.message.includes(`http://localhost:${elsewhere.port}`), e.message);
    assert.ok(!e.message.includes(KEY), e.message);
    return true;
  };

  for (const authHeader of ['bearer', 'api-key'] as const)
    it(`${authHeader}: ten requests redirected to another origin are refused, naming both; the key never arrives`, async () => {
      for (let i = 0; i < 10; i++) {
        const provider = createProvider(cfg({ authHeader, stream: i % 2 === 0 }));
        await assert.rejects(provider.complete({ messages: [{ role: 'user', content: `request ${i}` }] }), names);
      }
      await assert.rejects(createProvider(cfg({ authHeader })).listModels(), names);
      assert.equal(await createProvider(cfg({ authHeader })).contextWindow!(), null);
      const check = await checkConnection(createProvider(cfg({ authHeader })), `http://127.0.0.1:${origin.port}/v1`);
      assert.equal(check.ok, false);
      assert.match(check.message, new RegExp(`redirect to http://localhost:${elsewhere.port}, which was not followed`));
      // The SDK's own retries go to the key's origin again, never to the other one.
      const retrying = createProvider(cfg({ authHeader, maxRetries: 1 }));
      await assert.rejects(retrying.complete({ messages: [{ role: 'user', content: 'retried' }] }), names);
      assert.deepEqual(received, { requests: 0, withKey: 0 });
      assert.ok(originRequests >= 15, `${originRequests} requests reached the key's origin`);
    });

  for (const authHeader of ['bearer', 'api-key'] as const)
    it(`${authHeader}: a redirect within the origin is followed, and the key goes with it`, async () => {
      redirect = 'same';
      for (const stream of [true, false]) {
        const r = await createProvider(cfg({ authHeader, stream })).complete({
          messages: [{ role: 'user', content: 'hello' }],
        });
        assert.equal(r.response.message.content, 'Answered where the key belongs.');
      }
      assert.deepEqual(await createProvider(cfg({ authHeader })).listModels(), [DEMO_MODEL_ID]);
      assert.deepEqual(
        model.requests.map((q) => q.auth),
        [
          { scheme: authHeader, key: KEY },
          { scheme: authHeader, key: KEY },
        ],
      );
      assert.deepEqual(received, { requests: 0, withKey: 0 });
    });

  it('through the runner: the run pauses saying where the redirect pointed, and resumes once it stays in the origin', async () => {
    const t = makeRunner({
      baseURL: cfg({}).baseURL,
      deps: { provider: (m) => createProvider(cfg({ model: m, authHeader: 'api-key' })) },
    });
    const h = await t.runner.start({ task: 'anything' });
    const out = await h.done;
    assert.equal(out.state, 'paused_error', out.detail ?? '');
    assert.match(
      out.detail ?? '',
      new RegExp(`redirect to http://localhost:${elsewhere.port}, which was not followed`),
    );
    assert.deepEqual(received, { requests: 0, withKey: 0 });

    redirect = 'same';
    const resumed = await (await t.runner.resume(h.runId)).done;
    assert.equal(resumed.state, 'completed', resumed.detail ?? '');
    assert.equal((await t.store.loadSnapshot(h.runId)).snapshot.final_text, 'Answered where the key belongs.');
    assert.deepEqual(received, { requests: 0, withKey: 0 });
  });
});
