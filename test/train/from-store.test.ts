/**
 * Offline training from stored groups: a real `spindle serve` (tiny checkpoint) behind a real
 * `spindle proxy`, driven with the `openai` client; the scored groups are then trained on
 * (trainFromStore) and exported (export-samples) from the proxy's store.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { exportStoredSamples } from '../../src/cli/commands/export-samples.ts';
import { UsageError } from '../../src/core/errors.ts';
import { initEngine } from '../../src/model/engine.ts';
import { trainDefaultTokenizer } from '../../src/model/tokenizer/default-tokenizer.ts';
import { tokenizerFromJson } from '../../src/model/tokenizer/tokenizer.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import type { ModelAssets } from '../../src/train/default-model.ts';
import { checkTokenizerFits, loadStartModel } from '../../src/train/from-store-model.ts';
import { trainFromStore, type OfflineTrainOutcome } from '../../src/train/from-store.ts';
import { loadModelFolder } from '../../src/train/checkpoint-io.ts';
import { maxAbsDiff } from '../eval/tiny-checkpoint.ts';
import { startProxyProcess, type ProxyProcess } from '../server/fixtures/proxy-process.ts';
import { startServe, tinyCheckpointDir, type ServeProcess } from '../server/serve-process.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

type Sampled = { ids: number[]; logprobs: number[] };

let serve: ServeProcess;
let proxy: ProxyProcess;
/** A second proxy run on the same store: groups sampled at temperature 0.5, and one at 1. */
let tempered: ProxyProcess;
let store: Store;
let modelDir: string;
/** What the server returned, by trajectory id. */
const sampled = new Map<string, Sampled>();
let outcome: OfflineTrainOutcome;

const QUESTION = 'Your hand: 10, 6. Dealer shows 9. hit or stick?';

async function call(trajectory: string, task: string, seed: number, withIds = true, temperature = 1, via = proxy): Promise<void> {
  const client = new OpenAI({ baseURL: `${via.url}/t/${trajectory}/task/${task}/v1`, apiKey: 'k', maxRetries: 0 });
  const body = { model: 'tiny', max_tokens: 5, temperature, seed, messages: [{ role: 'user', content: QUESTION }], ...(withIds ? { logprobs: true, return_token_ids: true } : {}) };
  const res = await client.chat.completions.create(body as ChatCompletionCreateParamsNonStreaming);
  const choice = res.choices[0] as (typeof res.choices)[0] & { token_ids?: number[] };
  sampled.set(trajectory, { ids: choice.token_ids ?? [], logprobs: (choice.logprobs?.content ?? []).map((e) => e.logprob) });
}

async function reward(trajectory: string, value: number, via = proxy): Promise<void> {
  const res = await fetch(`${via.url}/trajectories/${trajectory}/reward`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ reward: value }) });
  assert.equal(res.status, 200, await res.text());
}

before(async () => {
  modelDir = tinyCheckpointDir();
  serve = await startServe(['--model', modelDir]);
  proxy = await startProxyProcess(`${serve.url}/v1`);
  // Task hand-1: four scored trajectories with distinct rewards, one without ids, one never scored.
  const rewards = [0, 1, 0.25, 0.5];
  for (let i = 0; i < rewards.length; i++) await call(`h1-${i}`, 'hand-1', 10 + i);
  await call('h1-no-ids', 'hand-1', 20, false);
  await call('h1-unscored', 'hand-1', 21);
  // Task hand-2: a tied group.
  await call('h2-0', 'hand-2', 30);
  await call('h2-1', 'hand-2', 31);
  for (let i = 0; i < rewards.length; i++) await reward(`h1-${i}`, rewards[i]);
  await reward('h1-no-ids', 1);
  await reward('h2-0', 1);
  await reward('h2-1', 1);
  await proxy.stop();
  tempered = await startProxyProcess(`${serve.url}/v1`, [], proxy.db);
  for (let i = 0; i < rewards.length; i++) {
    await call(`t05-${i}`, 'half', 40 + i, true, 0.5, tempered);
    await call(`t1-${i}`, 'one', 50 + i, true, 1, tempered);
    await reward(`t05-${i}`, rewards[i], tempered);
    await reward(`t1-${i}`, rewards[i], tempered);
  }
  await tempered.stop();
  await serve.stop();

  await initEngine({ threads: 1 });
  store = await openStore(proxy.db);
  const model = await loadStartModel(modelDir, store);
  outcome = await trainFromStore({
    store,
    selection: { runId: proxy.runId },
    model,
    // Calls cut at max_tokens are kept: the tiny random model rarely ends a turn in 5 tokens.
    config: { steps: 2, lr: 1e-3, miniBatches: 2, rows: 4, rowLength: 64, samples: { truncated: 'keep' } },
  });
});

after(async () => {
  await proxy?.stop();
  await tempered?.stop();
  await serve?.stop();
  await store?.close();
});

describe('train --from-store on groups recorded by the proxy', () => {
  it('trains exactly the completion ids and logprobs the server returned', () => {
    const { batch } = outcome.data;
    assert.equal(batch.samples.length, 4);
    for (const sample of batch.samples) {
      const server = sampled.get(sample.trajectoryId);
      assert.ok(server && server.ids.length > 0, `the server returned ids for ${sample.trajectoryId}`);
      assert.equal(sample.spans.length, 1);
      const [span] = sample.spans;
      assert.deepEqual(sample.tokens.slice(span.start, span.end), server.ids);
      assert.deepEqual(sample.logprobs.slice(span.start, span.end), server.logprobs);
    }
  });

  it('computes the loss on them with nonzero advantages and changes the weights', async () => {
    const group = outcome.data.advantages.advantages.filter((a) => a.groupId === `${proxy.runId}:hand-1`);
    assert.equal(group.length, 4);
    for (const a of group) assert.notEqual(a.turnAdvantages[0], 0);
    assert.ok(group.some((a) => a.turnAdvantages[0] > 0) && group.some((a) => a.turnAdvantages[0] < 0));
    const trainedTokens = [0, 1, 2, 3].reduce((n, i) => n + (sampled.get(`h1-${i}`)?.ids.length ?? 0), 0);
    for (const m of outcome.metrics) {
      assert.equal(m['tokens/trained'], trainedTokens);
      assert.equal(m['train/updates'], 2);
      assert.ok(Number.isFinite(m['train/loss']) && m['train/grad_norm'] > 0);
      assert.ok(m['importance/weight_mean'] > 0);
    }
    // The server sampled with these very weights at temperature 1. Step 1's π_old is the weights it
    // starts from, for both of its updates, so the importance weight is 1 even in the second;
    // step 2 starts from moved weights and the weight corrects for them.
    assert.ok(Math.abs(outcome.metrics[0]['importance/weight_mean'] - 1) < 1e-5, `step 1 weight ${outcome.metrics[0]['importance/weight_mean']}`);
    assert.notEqual(outcome.metrics[1]['importance/weight_mean'], outcome.metrics[0]['importance/weight_mean']);
    // The saved checkpoint loads as run:RUN and holds weights that moved from the start.
    const saved = await loadStartModel(`run:${outcome.runId}`, store);
    const moved = Object.keys(outcome.startParams).map((name) => maxAbsDiff(outcome.startParams[name].data, saved.params[name].data));
    assert.ok(Math.max(...moved) > 1e-4, `largest change ${Math.max(...moved)}`);
    const stored = await store.getMetrics(outcome.runId, { names: ['train/loss'] });
    assert.deepEqual(stored.map((p) => p.step), [1, 2]);
    assert.equal((await store.getRun(outcome.runId))?.status, 'finished');
  });

  it('counts a tied group as zero-variance and skips id-less and unscored trajectories', () => {
    const { advantages, selection } = outcome.data;
    assert.equal(advantages.stats.zeroVarianceGroups, 1);
    assert.deepEqual(advantages.dropped, [`${proxy.runId}:hand-2`]);
    assert.equal(selection.skipped.missing_ids, 1);
    assert.deepEqual(selection.skippedIds.missing_ids, ['h1-no-ids']);
    assert.equal(selection.skipped.awaiting_reward, 1);
    assert.equal(outcome.metrics[0]['groups/zero_variance'], 1);
    assert.equal(outcome.metrics[0]['offline/skipped/missing_ids'], 1);
  });

  it('refuses ids made by another tokenizer', async () => {
    const model = await loadStartModel(modelDir, store);
    const trajectories = (await store.listTrajectories(proxy.runId, { status: 'completed' })).items.filter((t) => t.id.startsWith('h1-') && t.id !== 'h1-no-ids');
    // Same tokenizer under another served name: the prompts decode to the messages sent.
    assert.doesNotThrow(() => checkTokenizerFits(trajectories, { ...model, modelIds: ['other-name'] }));
    const other = trainDefaultTokenizer(['a completely different corpus of words', 'nothing about cards at all'], { vocabSize: 300 });
    const tokenizer = tokenizerFromJson(other.tokenizerJson, other.tokenizerConfig);
    const foreign = { ...model, assets: { ...model.assets, tokenizer } as ModelAssets, modelIds: ['other-name'], source: 'model:other' };
    assert.throws(() => checkTokenizerFits(trajectories, foreign), (e: unknown) => e instanceof UsageError && /another tokenizer|do not decode/.test(e.message));
  });

  it('trains from the command line into a run that loads as run:RUN', async () => {
    const config = join(tempDir('spindle-offline-'), 'offline.json');
    writeFileSync(config, JSON.stringify({ rows: 4, rowLength: 64, samples: { truncated: 'keep' } }));
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'spindle.js');
    const args = ['train', '--from-store', proxy.runId, '--model', `run:${outcome.runId}`, '--steps', '1', '--lr', '1e-3', '--config', config, '--threads', '1', '--db', proxy.db, '--accept-model', 'tiny', '--json'];
    const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const result = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? 'null') as { runId: string; samples: number; trajectories: { skipped: Record<string, number> } };
    assert.equal(result.samples, 4);
    assert.equal(result.trajectories.skipped.missing_ids, 1);
    const trained = await loadStartModel(`run:${result.runId}`, store);
    const start = await loadStartModel(`run:${outcome.runId}`, store);
    assert.ok(Object.keys(start.params).some((name) => maxAbsDiff(start.params[name].data, trained.params[name].data) > 0));
  });

  it('trains LoRA adapters over the frozen model: the checkpoint holds the base and a PEFT adapter, run:RUN loads them merged', async () => {
    const model = await loadStartModel(modelDir, store);
    const lora = await trainFromStore({
      store,
      selection: { runId: proxy.runId },
      model,
      config: { steps: 2, lr: 1e-2, rows: 4, rowLength: 64, samples: { truncated: 'keep' }, lora: { r: 2, alpha: 4, targetModules: ['q_proj', 'v_proj', 'down_proj'] } },
    });
    assert.ok(lora.adapter);
    assert.deepEqual(lora.adapter.lora, { r: 2, alpha: 4, targetModules: ['q_proj', 'v_proj', 'down_proj'], useRslora: false, dropout: 0 });
    const names = Object.keys(lora.adapter.adapters);
    const layers = model.assets.cfg.numLayers;
    assert.equal(names.length, 2 * 3 * layers); // A and B of 3 targets per layer
    // B starts at 0 and the updates moved it.
    const bMax = Math.max(...names.filter((n) => n.endsWith('lora_B.weight')).map((n) => Math.max(...Array.from(lora.adapter!.adapters[n].data, Math.abs))));
    assert.ok(bMax > 1e-5, `largest |B| ${bMax}`);
    for (const m of lora.metrics) assert.ok(Number.isFinite(m['train/loss']) && m['train/grad_norm'] > 0);
    assert.ok(Math.abs(lora.metrics[0]['importance/weight_mean'] - 1) < 1e-5);
    // The folder keeps the base untouched and the adapter beside it.
    const dir = join(lora.runDir, lora.checkpoint);
    assert.ok(existsSync(join(dir, 'adapter', 'adapter_config.json')) && existsSync(join(dir, 'adapter', 'adapter_model.safetensors')));
    const folder = loadModelFolder(dir);
    for (const name of Object.keys(lora.startParams)) assert.equal(maxAbsDiff(folder.params[name].data, lora.startParams[name].data), 0, name);
    // Only the targeted projections moved; run:RUN stands for the base with the adapter merged.
    const loaded = await loadStartModel(`run:${lora.runId}`, store);
    for (const name of Object.keys(lora.startParams)) {
      assert.ok(maxAbsDiff(loaded.params[name].data, lora.params[name].data) < 1e-6, name);
      const moved = maxAbsDiff(loaded.params[name].data, lora.startParams[name].data) > 0;
      assert.equal(moved, /\.(q_proj|v_proj|down_proj)\.weight$/.test(name), name);
    }
    await assert.rejects(
      trainFromStore({ store, selection: { runId: proxy.runId }, model, config: { lora: { r: 0, alpha: 4 } } }),
      (e: unknown) => e instanceof UsageError && /offline\.lora\.r/.test(e.message),
    );
    await assert.rejects(
      trainFromStore({ store, selection: { runId: proxy.runId }, model, config: { lora: { r: 2, alpha: 4, targetModules: ['lm_head' as never] } } }),
      (e: unknown) => e instanceof UsageError && /offline\.lora\.targetModules/.test(e.message),
    );
  });

  it('exports the groups in the Atropos layout', async () => {
    const file = join(tempDir('spindle-export-'), 'groups.jsonl');
    const result = await exportStoredSamples({ fromStore: proxy.runId, format: 'atropos', out: file, keepTruncated: true, db: proxy.db });
    assert.equal(result.samples, 4);
    assert.equal(result.skipped.missing_ids, 1);
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { tokens: number[][]; masks: number[][]; group_overrides: { group_id: string } });
    assert.equal(lines.length, 1);
    assert.equal(lines[0].group_overrides.group_id, `${proxy.runId}:hand-1`);
    const trained = lines[0].masks.map((m) => m.filter((id) => id !== -100));
    assert.deepEqual(new Set(trained.map((ids) => JSON.stringify(ids))), new Set([0, 1, 2, 3].map((i) => JSON.stringify(sampled.get(`h1-${i}`)?.ids))));
  });
});

describe("train --from-store at the calls' sampling temperature", () => {
  const config = { steps: 1, lr: 1e-3, rows: 4, rowLength: 64, samples: { truncated: 'keep' as const } };

  it('scores the policy at the temperature the calls recorded, so the sampler is the start model', async () => {
    const model = await loadStartModel(modelDir, store);
    const half = await trainFromStore({ store, selection: { runId: tempered.runId, taskIds: ['half'] }, model, config });
    assert.equal(half.temperature, 0.5);
    assert.equal(half.data.batch.samples.length, 4);
    // The server sampled these answers from the start weights at 0.5: scored at 0.5, π_old is the sampler.
    assert.ok(Math.abs(half.metrics[0]['importance/weight_mean'] - 1) < 1e-5, `at 0.5: weight ${half.metrics[0]['importance/weight_mean']}`);
    assert.equal((await store.getRun(half.runId))?.config.temperature, 0.5);
    // Scored at 1 instead (a setting that overrides the record), π_old is another distribution.
    const asIfOne = await trainFromStore({ store, selection: { runId: tempered.runId, taskIds: ['half'] }, model, config: { ...config, temperature: 1 } });
    assert.equal(asIfOne.temperature, 1);
    assert.ok(Math.abs(asIfOne.metrics[0]['importance/weight_mean'] - 1) > 0.01, `at 1: weight ${asIfOne.metrics[0]['importance/weight_mean']}`);
  });

  it('refuses calls sampled at several temperatures unless told which to use', async () => {
    const model = await loadStartModel(modelDir, store);
    await assert.rejects(
      trainFromStore({ store, selection: { runId: tempered.runId }, model, config }),
      (e: unknown) => e instanceof UsageError && /offline\.temperature: .*temperatures 0\.5, 1/.test(e.message),
    );
    const both = await trainFromStore({ store, selection: { runId: tempered.runId }, model, config: { ...config, temperature: 0.8 } });
    assert.equal(both.temperature, 0.8);
    assert.equal(both.data.batch.samples.length, 8);
  });
});
