// Where the API key goes (issue 18, finding 9) and what a base URL's credentials leave behind: the
// key is bound to the origin it was entered for; any other origin waits for the user's answer; a
// user name, password or secret query parameter in a base URL never reaches an error text, a log
// line or a checkpoint — through the real openai client and the real run loop.
import assert from 'node:assert/strict';
import { redactSecrets, redactUrl } from '../../../src/common/redact';
import { createProvider } from '../../../src/runner/provider';
import { checkConnection } from '../../../src/runner/provider/check';
import {
  keyQuestion,
  keyRoute,
  originOf,
  parseStoredKey,
  serializeStoredKey,
} from '../../../src/runner/provider/keyOrigin';
import { DEMO_MODEL_ID } from '../../fixtures/modelServer/scenario';
import { startModelServer } from '../../fixtures/modelServer/server';
import { makeRunner } from '../loop/support';

const KEY = { key: 'sk-entered-for-openai', origin: 'https://api.openai.com' };

describe('the API key goes only where it was entered for', () => {
  it('an origin is scheme, host and port (default ports dropped, host case and paths ignored)', () => {
    assert.equal(originOf('https://api.openai.com/v1'), 'https://api.openai.com');
    assert.equal(originOf('https://API.OpenAI.com:443/v1/'), 'https://api.openai.com');
    assert.equal(originOf('http://127.0.0.1:11434/v1'), 'http://127.0.0.1:11434');
    assert.equal(originOf('https://user:pw@evil.example/v1'), 'https://evil.example');
    assert.equal(originOf('not a url'), null);
    assert.equal(originOf('file:///etc/passwd'), null);
  });

  it('the stored key carries its origin; a key stored before that counts as entered for the user’s own base URL', () => {
    assert.deepEqual(parseStoredKey(serializeStoredKey(KEY), null), KEY);
    assert.deepEqual(parseStoredKey('sk-legacy', 'https://api.openai.com'), {
      key: 'sk-legacy',
      origin: 'https://api.openai.com',
    });
    assert.equal(parseStoredKey(undefined, 'https://x'), undefined);
    assert.equal(parseStoredKey('', 'https://x'), undefined);
  });

  it('sent to its own origin and to origins the user allowed; asked for any other; withheld where refused', () => {
    assert.deepEqual(keyRoute(KEY, 'https://api.openai.com/v1', {}), { kind: 'send' });
    assert.deepEqual(keyRoute(KEY, 'https://api.openai.com/other/path', {}), { kind: 'send' });
    for (const url of [
      'https://evil.example/v1',
      'http://api.openai.com/v1',
      'https://api.openai.com:8443/v1',
      'https://api.openai.com.evil.example/v1',
      'https://api.openai.com@evil.example/v1',
    ])
      assert.equal(keyRoute(KEY, url, {}).kind, 'ask', url);
    assert.deepEqual(keyRoute(KEY, 'https://proxy.example/v1', { 'https://proxy.example': 'allow' }), {
      kind: 'send',
    });
    assert.deepEqual(keyRoute(KEY, 'https://evil.example/v1', { 'https://evil.example': 'deny' }), {
      kind: 'withhold',
      why: 'you chose not to send your API key to https://evil.example',
    });
    assert.equal(keyRoute(KEY, 'javascript:alert(1)', {}).kind, 'withhold');
    assert.equal(keyRoute(KEY, 'https://evil.example/v1', { constructor: 'allow' } as never).kind, 'ask');
  });

  it('the question says who names the origin: a workspace, or the user’s own settings', () => {
    const ws = keyQuestion({
      target: 'https://evil.example',
      entered: 'https://api.openai.com',
      source: 'workspace',
      baseUrl: 'https://evil.example/v1',
      userBaseUrl: 'https://api.openai.com/v1',
    });
    assert.equal(ws.message, 'This workspace sends your API key to https://evil.example — allow?');
    assert.match(ws.detail, /^Your API key was entered for https:\/\/api\.openai\.com\. This workspace's settings set/);
    const user = keyQuestion({ ...ws, source: 'user', baseUrl: 'https://proxy.example/v1', userBaseUrl: '' });
    assert.equal(user.message, 'Send your API key to https://evil.example?');
  });
});

describe('credentials in URLs are scrubbed', () => {
  it('user names, passwords and secret query parameters become ***; other text is untouched', () => {
    assert.equal(redactUrl('https://user:p%40ss@host.example/v1'), 'https://***@host.example/v1');
    assert.equal(redactUrl('https://user:p@ss@host.example/v1'), 'https://***@host.example/v1');
    assert.equal(redactUrl('http://token@127.0.0.1:8080/v1'), 'http://***@127.0.0.1:8080/v1');
    assert.equal(
      redactUrl('https://r.openai.azure.com/openai/v1?api-version=2024&api-key=abc123&x=1'),
      'https://r.openai.azure.com/openai/v1?api-version=2024&api-key=***&x=1',
    );
    assert.equal(
      redactSecrets('GET https://h/x?Token=t0k&sig=s1g#frag failed (key sk-live-999 refused)', ['sk-live-999']),
      'GET https://h/x?Token=***&sig=***#frag failed (key *** refused)',
    );
    for (const plain of ['https://api.openai.com/v1', 'mail me at user@example.com', 'a ? key = b', 'x?keys=1'])
      assert.equal(redactSecrets(plain), plain);
  });

  it('long hostile texts are scanned in one pass', () => {
    const text = `${'://a'.repeat(50_000)}@h ${'?key'.repeat(50_000)}=v`;
    const out = redactSecrets(text);
    assert.ok(out.endsWith('?key=***'), out.slice(-20));
    assert.ok(!out.includes('://a@'));
  });
});

describe('scrubbed on the way to error texts and checkpoints (real client, real loop)', function () {
  this.timeout(20_000);

  it('a base URL with a password: the fetch error names the URL without it', async () => {
    const server = await startModelServer({ scenario: 'demo' });
    try {
      const url = server.url.replace('http://', 'http://me:hunter2-password@');
      const provider = createProvider({ baseURL: url, model: DEMO_MODEL_ID, maxRetries: 0 });
      const err = await provider.complete({ messages: [{ role: 'user', content: 'hi' }] }).then(
        () => null,
        (e: Error) => e,
      );
      assert.ok(err, 'undici refuses a URL with credentials');
      assert.ok(!err.message.includes('hunter2'), err.message);
      assert.match(err.message, /http:\/\/\*\*\*@127\.0\.0\.1/);
    } finally {
      await server.close();
    }
  });

  it('a run whose base URL holds credentials pauses with a message and checkpoints free of them', async () => {
    const server = await startModelServer({ scenario: 'demo' });
    try {
      const url = `${server.url.replace('http://', 'http://me:hunter2-password@')}?api-key=azure-secret-777`;
      const { runner, store } = makeRunner({ baseURL: url });
      const h = await runner.start({ task: 'anything' });
      const out = await h.done;
      assert.equal(out.state, 'paused_error', out.detail ?? '');
      const stored = JSON.stringify([
        await store.getRun(h.runId),
        await store.list(h.runId, { limit: 100 }),
        (await store.loadSnapshot(h.runId)).snapshot,
      ]);
      for (const secret of ['hunter2', 'azure-secret-777']) {
        assert.ok(!stored.includes(secret), `${secret} in the checkpoints`);
        assert.ok(!(out.detail ?? '').includes(secret), out.detail ?? '');
      }
    } finally {
      await server.close();
    }
  });

  it('a key withheld from an origin: the server’s 401 is explained as that, not as a wrong key', async () => {
    const server = await startModelServer({
      scenario: {
        name: 'check',
        description: 'offline demo model: check',
        turns: [{ reply: { content: 'x' } }],
      },
      apiKey: 'sk-needed',
    });
    try {
      const why = `you chose not to send your API key to ${originOf(server.url)}`;
      const provider = createProvider({ baseURL: server.url, model: DEMO_MODEL_ID, maxRetries: 0, keyWithheld: why });
      const r = await checkConnection(provider, server.url);
      assert.equal(r.problem, 'auth');
      assert.equal(
        r.message,
        `401: ${server.url} asks for an API key, and yours was not sent there: ${why}. “Agent Waypoints: Forget where the API key may go…” lets you answer again.`,
      );
    } finally {
      await server.close();
    }
  });
});
