/**
 * Hot reload: the in-process `updateWeights` API and `POST /admin/reload` picking up a run's newer
 * checkpoint; with no --model the server serves the store's newest checkpoint.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { saveTinyModel, tinyModel } from '../eval/tiny-checkpoint.ts';
import { storeWithRun, type RunStore } from '../eval/run-store.ts';
import { toParams } from '../../src/model/params.ts';
import { tree } from '../../src/model/engine.ts';
import { startServer, type SpindleServer } from '../../src/server/serve.ts';
import { openStore } from '../../src/store/open.ts';

const messages = [{ role: 'user' as const, content: 'Dealer shows 9. hit or stick?' }];
const ask = { messages, max_tokens: 8, seed: 21, temperature: 1, return_token_ids: true } as Record<string, unknown>;

describe('spindle serve hot reload', () => {
  let run: RunStore;
  let server: SpindleServer;
  let client: OpenAI;
  let stepOneIds: number[] = [];

  const sample = async () => {
    const { data, response } = await client.chat.completions.create({ model: server.model.modelId, ...ask } as never as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
    return { ids: (data.choices[0] as { token_ids?: number[] }).token_ids!, header: response.headers.get('x-spindle-policy-version'), field: (data as unknown as { policy_version: number }).policy_version };
  };

  before(async () => {
    run = await storeWithRun([1], (dir) => saveTinyModel(dir, tinyModel(3)));
    // No --model: the newest checkpoint in the store.
    server = await startServer({ db: run.db, port: 0, threads: 1 });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
  });
  after(async () => {
    await server?.close();
  });

  it('serves the store newest checkpoint and reloads a newer one on POST /admin/reload', async () => {
    assert.equal(server.model.modelId, `run:${run.runId}`);
    const first = await sample();
    assert.equal(first.header, '1');
    assert.equal(first.field, 1);
    stepOneIds = first.ids;

    const nothing = (await (await fetch(`${server.url}/admin/reload`, { method: 'POST' })).json()) as { reloaded: boolean; policyVersion: number };
    assert.deepEqual(nothing, { reloaded: false, policyVersion: 1, step: 1 });

    // The trainer publishes step 2 (other weights, policy version 2).
    const store = await openStore(run.db);
    const path = join('checkpoints', 'step-000002');
    saveTinyModel(join(store.runDir(run.runId), path), tinyModel(99));
    await store.saveCheckpoint({ runId: run.runId, step: 2, path, policyVersion: 2, createdAt: new Date().toISOString(), metrics: {} });
    await store.close();

    const reload = (await (await fetch(`${server.url}/admin/reload`, { method: 'POST' })).json()) as { reloaded: boolean; policyVersion: number; step: number };
    assert.deepEqual(reload, { reloaded: true, policyVersion: 2, step: 2 });
    const second = await sample();
    assert.equal(second.header, '2');
    assert.notDeepEqual(second.ids, first.ids, 'same seed, new weights: a different sample');
  });

  it('takes new weights in process through updateWeights', async () => {
    const host = tinyModel(3).host; // step 1's weights again
    const params = toParams(host);
    server.updateWeights(params, 7);
    tree.dispose(params);
    const s = await sample();
    assert.equal(s.header, '7');
    assert.equal(s.field, 7);
    assert.deepEqual(s.ids, stepOneIds, 'step 1 weights again: step 1 sample again');
  });

  it('batches concurrent requests into shared decodes', async () => {
    const before = server.model.policy.batchSizes.length;
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => client.chat.completions.create({ model: server.model.modelId, messages, max_tokens: 8, seed: i })));
    assert.equal(answers.length, 8);
    const sizes = server.model.policy.batchSizes.slice(before);
    assert.equal(sizes.reduce((a, b) => a + b, 0), 8);
    assert.ok(sizes.length < 8, `8 requests in ${sizes.length} batches (${sizes.join(', ')})`);
  });

  it('with reloadEveryMs, loads a newly published checkpoint by itself', async () => {
    const other = await storeWithRun([1], (dir) => saveTinyModel(dir, tinyModel(3)), 'run_test0002');
    const watched = await startServer({ model: `run:${other.runId}`, db: other.db, port: 0, threads: 1, reloadEveryMs: 50 });
    const version = () => watched.model.policy.policyVersion;
    try {
      assert.equal(version(), 1);
      const store = await openStore(other.db);
      const path = join('checkpoints', 'step-000005');
      saveTinyModel(join(store.runDir(other.runId), path), tinyModel(5));
      await store.saveCheckpoint({ runId: other.runId, step: 5, path, policyVersion: 5, createdAt: new Date().toISOString(), metrics: {} });
      await store.close();
      const deadline = Date.now() + 10_000;
      while (version() !== 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(version(), 5);
      const r = await fetch(`${watched.url}/v1/models`);
      assert.equal(r.headers.get('x-spindle-policy-version'), '5');
    } finally {
      await watched.close();
    }
  });
});
