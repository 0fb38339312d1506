// Where the API key goes, in a real VS Code (issue 18, finding 9). The key is bound to the origin it
// was entered for. A base URL from the workspace's settings that names another origin asks the user
// once — the picker's GET /models, Check model connection and a run alike — and the answer is kept
// per origin, revocable. The modal is answered through the extension's test-only API (its words are
// asserted); everything else is the product: settings, SecretStorage, globalState, real HTTP.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { CommandIds } from '../../src/contributes';
import type { KeyGrant, KeyQuestion } from '../../src/runner/provider/keyOrigin';
import { originOf } from '../../src/runner/provider/keyOrigin';
import type { CheckResult } from '../../src/runner/provider/check';
import { CHECK_TOOL_NAME } from '../../src/runner/provider/check';
import { DEMO_MODEL_ID, type ScenarioInput } from '../fixtures/modelServer/scenario';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { activated, configure, setApiKey, waitForState } from './helpers';

const KEY = 'sk-bound-to-its-origin-4711';
const SCENARIO: ScenarioInput = {
  name: 'key-origin',
  description: 'offline demo model: answers a check and a one-turn run',
  model: DEMO_MODEL_ID,
  turns: [{ reply: { content: '(offline demo model) done' } }],
  subconversations: [
    {
      id: 'check',
      user_contains: 'Agent Waypoints connection check',
      turns: [{ reply: { tool_calls: [{ name: CHECK_TOOL_NAME, arguments: { ok: true } }] } }],
    },
  ],
};

/** A server that needs the key; what its GET /models lists shows whether the key reached it. */
const serve = (listed: string) =>
  startModelServer({ scenario: SCENARIO, apiKey: KEY, models: [DEMO_MODEL_ID, listed] });
const check = () => vscode.commands.executeCommand<CheckResult>(CommandIds.checkConnection);
const workspaceBaseUrl = (url: string | undefined) =>
  vscode.workspace
    .getConfiguration('agentWaypoints')
    .update('provider.baseUrl', url, vscode.ConfigurationTarget.Workspace);

describe('the API key goes only where it was entered for', () => {
  let entered: ModelServer;
  let other: ModelServer;
  const questions: KeyQuestion[] = [];
  let answer: KeyGrant | undefined;

  before(async () => {
    const api = await activated();
    entered = await serve('listed-by-the-entered-server');
    other = await serve('listed-only-with-the-key');
    await configure({
      'agentWaypoints.provider.baseUrl': entered.url,
      'agentWaypoints.provider.model': DEMO_MODEL_ID,
      'agentWaypoints.provider.maxRetries': 0,
    });
    await setApiKey(KEY);
    api.testing!.answerKeyQuestions(async (q) => (questions.push(q), answer));
  });
  after(async () => {
    const api = await activated();
    api.testing!.answerKeyQuestions(undefined);
    await workspaceBaseUrl(undefined);
    await vscode.commands.executeCommand(CommandIds.clearApiKey);
    await configure({
      'agentWaypoints.provider.baseUrl': undefined,
      'agentWaypoints.provider.model': undefined,
      'agentWaypoints.provider.maxRetries': undefined,
    });
    await entered.close();
    await other.close();
  });

  it('the endpoint it was entered for gets it without a question', async () => {
    const r = await check();
    assert.equal(r.ok, true, r.message);
    assert.deepEqual(questions, []);
  });

  it('a workspace naming another origin asks once; refused, the key reaches it neither from the picker nor from Check, and the answer is kept', async () => {
    const api = await activated();
    await workspaceBaseUrl(other.url);
    answer = 'deny';
    const target = originOf(other.url)!;
    const r = await check();
    assert.equal(r.problem, 'auth');
    assert.match(r.message, new RegExp(`asks for an API key, and yours was not sent there: you chose not to send`));
    assert.equal(questions.length, 1);
    assert.equal(questions[0]!.message, `This workspace sends your API key to ${target} — allow?`);
    assert.equal(questions[0]!.source, 'workspace');
    assert.match(questions[0]!.detail, new RegExp(`^Your API key was entered for ${originOf(entered.url)}\\.`));
    // The model picker's GET /models (what it lists on open) went without the key: the server refused it.
    const listed = (await api.testing!.models.choices()).map((c) => c.model);
    assert.ok(!listed.includes('listed-only-with-the-key'), listed.join(', '));
    assert.equal(questions.length, 1, 'the refusal is remembered: no second question');
    assert.deepEqual(api.testing!.keys.grants(), { [target]: 'deny' });
    assert.equal(other.requests.length, 0, 'nothing got past the server without the key');
  });

  it('allowed (after the refusal was forgotten), the key goes there for Check, the picker and a run; forgetting asks again', async () => {
    const api = await activated();
    await workspaceBaseUrl(other.url);
    const target = originOf(other.url)!;
    assert.equal(await vscode.commands.executeCommand<number>(CommandIds.forgetKeyOrigins, [target]), 1);
    answer = 'allow';
    const asked = questions.length;
    assert.equal((await check()).ok, true);
    assert.equal(questions.length, asked + 1);
    const listed = (await api.testing!.models.choices()).map((c) => c.model);
    assert.ok(listed.includes('listed-only-with-the-key'), listed.join(', '));
    const runId = await vscode.commands.executeCommand<string>(CommandIds.startRun, 'Say done', {
      model: DEMO_MODEL_ID,
    });
    assert.equal(await waitForState(api, runId, ['completed', 'paused_error']), 'completed');
    assert.equal(other.requests.at(-1)?.auth.key, KEY);
    assert.equal(questions.length, asked + 1, 'asked once for all three');

    await vscode.commands.executeCommand(CommandIds.forgetKeyOrigins, [target]);
    answer = undefined; // the modal closed without an answer: not sent, not remembered
    const r = await check();
    assert.match(r.message, /sending your API key to .* was not confirmed/);
    assert.equal(questions.length, asked + 2);
    assert.deepEqual(api.testing!.keys.grants(), {});
  });

  it('another origin in the user’s own settings asks too, in its own words', async () => {
    await workspaceBaseUrl(undefined);
    await configure({ 'agentWaypoints.provider.baseUrl': other.url });
    answer = 'deny';
    const asked = questions.length;
    assert.equal((await check()).problem, 'auth');
    assert.equal(questions[asked]?.message, `Send your API key to ${originOf(other.url)}?`);
    assert.equal(questions[asked]?.source, 'user');
    await configure({ 'agentWaypoints.provider.baseUrl': entered.url });
    assert.equal((await check()).ok, true, 'its own origin still gets it');
  });
});

describe('the base URL in restricted mode (untrusted workspace)', () => {
  it('is not read from the untrusted workspace: the key stays with the user’s endpoint, nothing is asked', async () => {
    const api = await activated();
    const entered = await serve('listed-by-the-entered-server');
    const other = await serve('listed-only-with-the-key');
    const questions: KeyQuestion[] = [];
    try {
      await configure({
        'agentWaypoints.provider.baseUrl': entered.url,
        'agentWaypoints.provider.model': DEMO_MODEL_ID,
      });
      await setApiKey(KEY);
      api.testing!.answerKeyQuestions(async (q) => (questions.push(q), 'allow'));
      await workspaceBaseUrl(other.url);
      const r = await check();
      assert.equal(r.ok, true, r.message);
      assert.match(r.message, new RegExp(`at ${entered.url.replace(/[./]/g, '\\$&')} answered`));
      assert.deepEqual(questions, []);
      assert.equal(other.requests.length, 0);
    } finally {
      api.testing!.answerKeyQuestions(undefined);
      await workspaceBaseUrl(undefined);
      await vscode.commands.executeCommand(CommandIds.clearApiKey);
      await configure({ 'agentWaypoints.provider.baseUrl': undefined, 'agentWaypoints.provider.model': undefined });
      await entered.close();
      await other.close();
    }
  });
});
