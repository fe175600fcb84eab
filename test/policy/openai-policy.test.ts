/**
 * The remote policy against a local OpenAI-compatible HTTP server that answers like a server that
 * gives no token ids and fails now and then: retries on 429 and 5xx (counted), no retry on 400,
 * finish-reason and version mapping, inexact ids counted, the concurrency limit.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { OpenAIPolicy } from '../../src/policy/openai.ts';
import { completionTokenIdsOf, promptTokenIdsOf } from '../../src/policy/openai-tokens.ts';

type Plan = { status: number; body?: unknown; delayMs?: number; headers?: Record<string, string> };

describe('openai policy', () => {
  let server: Server;
  let baseURL: string;
  let plans: Plan[] = [];
  let bodies: Record<string, unknown>[] = [];
  let inFlight = 0;
  let maxInFlight = 0;

  const okBody = (finish: string, content = 'hello') => ({
    id: 'x', object: 'chat.completion', created: 0, model: 'served-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish, logprobs: { content: [{ token: 'hel', logprob: -0.5, bytes: null, top_logprobs: [] }, { token: 'lo', logprob: -0.25, bytes: null, top_logprobs: [] }] } }],
    usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
  });

  before(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (d) => (raw += d));
      req.on('end', () => {
        bodies.push(JSON.parse(raw));
        const plan = plans.shift() ?? { status: 200, body: okBody('stop') };
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        setTimeout(() => {
          inFlight--;
          res.writeHead(plan.status, { 'content-type': 'application/json', ...plan.headers });
          res.end(JSON.stringify(plan.body ?? { error: { message: `status ${plan.status}`, type: 'server_error', param: null, code: null } }));
        }, plan.delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [], maxTokens: 5, temperature: 0.7, topP: 0.9, stop: ['\n'], seed: 4, n: 1 };

  it('sends the sampling fields, maps the answer, and marks missing ids as inexact', async () => {
    plans = [{ status: 200, body: okBody('length'), headers: { 'x-spindle-policy-version': '12' } }];
    bodies = [];
    const policy = new OpenAIPolicy({ model: 'm', baseURL, backoffMs: 1 });
    const [c] = await policy.complete(request);
    assert.equal(bodies[0].model, 'm');
    assert.equal(bodies[0].temperature, 0.7);
    assert.equal(bodies[0].top_p, 0.9);
    assert.equal(bodies[0].max_tokens, 5);
    assert.deepEqual(bodies[0].stop, ['\n']);
    assert.equal(bodies[0].seed, 4);
    assert.equal(bodies[0].logprobs, true);
    assert.equal(bodies[0].tools, undefined, 'tools are rendered by the agent loop, not sent');
    assert.equal(c.text, 'hello');
    assert.equal(c.finishReason, 'length');
    assert.deepEqual(c.logprobs, [-0.5, -0.25]);
    assert.equal(c.completionTokenIds, null);
    assert.equal(c.tokenIdsExact, false);
    assert.equal(c.policyVersion, 12);
    assert.equal(c.modelId, 'served-model');
    assert.equal(policy.stats.inexactCompletions, 1);
    assert.equal(policy.stats.promptTokens, 10);
    assert.equal(policy.stats.completionTokens, 2);
  });

  it('retries 429 and 5xx with backoff, counting retries, and gives up after maxRetries', async () => {
    plans = [{ status: 429 }, { status: 503 }, { status: 200, body: okBody('stop') }];
    const policy = new OpenAIPolicy({ model: 'm', baseURL, backoffMs: 1, maxRetries: 3 });
    const [c] = await policy.complete(request);
    assert.equal(c.text, 'hello');
    assert.equal(policy.stats.retries, 2);
    plans = [{ status: 500 }, { status: 500 }, { status: 500 }];
    const failing = new OpenAIPolicy({ model: 'm', baseURL, backoffMs: 1, maxRetries: 2 });
    await assert.rejects(failing.complete(request), /500/);
    assert.equal(failing.stats.retries, 2);
    assert.equal(failing.stats.failedCalls, 1);
  });

  it('does not retry a 400 other than a rejected vLLM extension', async () => {
    plans = [{ status: 400, body: { error: { message: 'messages: bad', type: 'invalid_request_error', param: 'messages', code: null } } }];
    const policy = new OpenAIPolicy({ model: 'm', baseURL, backoffMs: 1 });
    await assert.rejects(policy.complete(request), /messages: bad/);
    assert.equal(policy.stats.retries, 0);
    // A server that rejects vLLM's fields is asked again without them.
    plans = [{ status: 400, body: { error: { message: 'Unrecognized request argument supplied: return_token_ids', type: 'invalid_request_error', param: null, code: null } } }];
    bodies = [];
    const [c] = await policy.complete(request);
    assert.equal(c.text, 'hello');
    assert.equal(bodies[0].return_token_ids, true);
    assert.equal(bodies[1].return_token_ids, undefined);
  });

  it('keeps at most maxConcurrency calls in flight', async () => {
    plans = Array.from({ length: 6 }, () => ({ status: 200, body: okBody('stop'), delayMs: 20 }));
    maxInFlight = 0;
    const policy = new OpenAIPolicy({ model: 'm', baseURL, maxConcurrency: 2 });
    await Promise.all(Array.from({ length: 6 }, () => policy.complete(request)));
    assert.equal(maxInFlight, 2);
    assert.equal(policy.stats.latenciesMs.length, 6);
  });

  it('with serverTools, sends the tools and maps the server tool_calls', async () => {
    const body = okBody('tool_calls', '');
    (body.choices[0].message as Record<string, unknown>).tool_calls = [{ id: 'call_7', type: 'function', function: { name: 'stick', arguments: '{}' } }];
    plans = [{ status: 200, body }];
    bodies = [];
    const policy = new OpenAIPolicy({ model: 'm', baseURL, serverTools: true });
    const tools = [{ name: 'stick', description: 'stop', parameters: { type: 'object', properties: {} } }];
    const [c] = await policy.complete({ ...request, tools });
    assert.deepEqual(bodies[0].tools, [{ type: 'function', function: { name: 'stick', description: 'stop', parameters: { type: 'object', properties: {} } } }]);
    assert.equal(c.finishReason, 'tool_calls');
    assert.deepEqual(c.toolCalls, [{ id: 'call_7', name: 'stick', arguments: '{}' }]);
  });

  it('reads vLLM token-id fields', () => {
    assert.deepEqual(completionTokenIdsOf({ token_ids: [1, 2] }, null), [1, 2]);
    assert.deepEqual(completionTokenIdsOf({}, ['token_id:5', 'token_id:17']), [5, 17]);
    assert.equal(completionTokenIdsOf({}, ['token_id:5', 'hello']), null);
    assert.equal(completionTokenIdsOf({}, null), null);
    assert.deepEqual(promptTokenIdsOf({ prompt_token_ids: [9, 8] }, {}), [9, 8]);
    assert.equal(promptTokenIdsOf({ prompt_token_ids: [9, -1] }, {}), null);
  });
});
