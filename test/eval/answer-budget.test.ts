/**
 * A trained checkpoint's answer budget: saved as generation_config.json's max_new_tokens, read back
 * by `model:DIR`, and used by `spindle eval` / `play` as the episode's maxTokens when --max-tokens
 * is not given (the default 512 left a ten-turn episode no room in a 1,024-token context).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { resolveEpisodeSettings, withAnswerBudget } from '../../src/agent/episode-settings.ts';
import { banditSpec } from '../../src/envs/bandit/spec.ts';
import { evaluatePolicies } from '../../src/eval/evaluate.ts';
import { initEngine } from '../../src/model/engine.ts';
import { loadEmbeddedPolicy } from '../../src/policy/embedded-load.ts';
import type { Policy } from '../../src/policy/policy.ts';
import { loadModelFolder, saveModelFolder } from '../../src/train/checkpoint-io.ts';
import { createDefaultModel } from '../../src/train/default-model.ts';
import { pickSpec } from '../train/trainer-fixtures.ts';
import { fixedTextPolicy, pullText } from './fixed-text-policy.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const shape = { vocabSize: 400, hiddenSize: 32, intermediateSize: 64, numLayers: 1, numHeads: 2, numKvHeads: 1, headDim: 16 };

test('the answer budget round-trips through generation_config.json and reaches the loaded policy', async () => {
  const { assets, params } = await createDefaultModel({ spec: pickSpec, options: {}, seed: 1, corpusEpisodes: 10, shape });
  const dir = tempDir('spindle-budget-');
  saveModelFolder(dir, { ...assets, answerBudget: 24 }, params);
  assert.equal(JSON.parse(readFileSync(join(dir, 'generation_config.json'), 'utf8')).max_new_tokens, 24);
  assert.equal(loadModelFolder(dir).assets.answerBudget, 24);
  const policy = await loadEmbeddedPolicy(dir, { threads: 1 });
  assert.equal(policy.answerBudget, 24);
  await policy.close();

  const plain = tempDir('spindle-budget-');
  saveModelFolder(plain, assets, params);
  assert.equal(JSON.parse(readFileSync(join(plain, 'generation_config.json'), 'utf8')).max_new_tokens, undefined);
  const unbudgeted = await loadEmbeddedPolicy(plain, { threads: 1 });
  assert.equal(unbudgeted.answerBudget, undefined);
  await unbudgeted.close();

  const config = JSON.parse(readFileSync(join(dir, 'generation_config.json'), 'utf8'));
  writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ ...config, max_new_tokens: 0 }));
  assert.throws(() => loadModelFolder(dir), /generation_config\.json: .*max_new_tokens/);
});

test('withAnswerBudget replaces maxTokens only for a policy that has a budget', () => {
  const episode = resolveEpisodeSettings({});
  assert.equal(episode.maxTokens, 512);
  assert.equal(withAnswerBudget(episode, { answerBudget: 30 }).maxTokens, 30);
  assert.equal(withAnswerBudget(episode, {}).maxTokens, 512);
  assert.equal(episode.maxTokens, 512, 'the shared settings are not changed');
});

test('evaluation plays a budgeted policy with its budget, so its episodes fit the context', async () => {
  // 100 prompt tokens + 16 fit a 300-token context; 100 + the default 512 do not.
  const budgeted: Policy = { ...fixedTextPolicy('budgeted', pullText(1)), contextLength: 300, answerBudget: 16, countTokens: () => 100 };
  const options = banditSpec.options.parse({});
  const request = { spec: banditSpec, options, policies: [budgeted], seeds: [0, 1, 2], episode: resolveEpisodeSettings({ temperature: 0 }) };
  const own = await evaluatePolicies({ ...request, answerBudgets: true });
  assert.equal(own.policies[0].truncated, 0);
  assert.equal(own.policies[0].meanTurns, 10);
  const fixed = await evaluatePolicies(request);
  assert.equal(fixed.policies[0].truncated, 3, 'with 512 tokens reserved no call fits');
  assert.equal(fixed.policies[0].meanTurns, 0);
});
