/**
 * RL with a KL to the frozen warm start (β > 0) on layouts without a shared prefix (the language-model
 * warm start trains every token after the first, so no prefix is shared): the reference forward
 * runs under jit on those layouts and the KL is logged; so is the entropy bonus the same run carries.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { initEngine } from '../../src/model/engine.ts';
import { openStore } from '../../src/store/open.ts';
import { parseTrainConfig } from '../../src/train/train-config.ts';
import { trainRun } from '../../src/train/trainer.ts';
import { metricsAt, newTrainRun, pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

test('klBeta > 0 with a language-model warm start (no shared prefix) trains and logs the KL; loss.entropyCoef logs its bonus', async () => {
  await initEngine({ threads: 1 });
  const settings = parseTrainConfig(
    tinyTrainConfig({
      steps: 2,
      warmStart: { maxSteps: 40, minSteps: 40, batchSize: 16, demoEpisodes: 60, checkEvery: 40, checkEpisodes: 8, languageModel: true, optimizer: { lr: 2e-2, warmupSteps: 5 } },
      loss: { klBeta: 0.1, entropyCoef: 0.01 },
      optimizer: { lr: 1e-3 },
      // Every step trains: with 4 seeds x 8 samples some group has distinct rewards.
      groupSize: 8,
    }),
  );
  const store = await openStore(join(tempDir('spindle-kl-'), 'spindle.db'));
  const runId = await newTrainRun(store);
  const outcome = await trainRun({ spec: pickSpec, options: {}, settings, store, runId, resume: null });
  try {
    const metrics = await store.getMetrics(runId);
    const kl = metrics.filter((m) => m.name === 'train/kl_loss');
    assert.ok(kl.length > 0, `the KL to the reference is logged: ${[...new Set(metrics.map((m) => m.name))].join(' ')}`);
    assert.ok(kl.every((m) => Number.isFinite(m.value) && m.value >= -1e-6), `k3 KL is finite and ≥ 0: ${kl.map((m) => m.value)}`);
    // Under dapo the bonus is c × the token-mean entropy, update by update, so also in the step's means.
    const entropy = new Map(metrics.filter((m) => m.name === 'train/entropy').map((m) => [m.step, m.value]));
    const bonus = metrics.filter((m) => m.name === 'train/entropy_bonus');
    assert.equal(bonus.length, kl.length, 'a bonus for every step that trained');
    for (const b of bonus) assert.ok(b.value > 0 && Math.abs(b.value - 0.01 * entropy.get(b.step)!) < 1e-7, `step ${b.step}: bonus ${b.value}, entropy ${entropy.get(b.step)}`);
  } finally {
    await outcome.policy.close();
    await store.close();
  }
});

test('rollouts at temperature 1.7: the loss and the reference score the tempered policy, so one update a step starts at ratio 1 and KL 0', async () => {
  await initEngine({ threads: 1 });
  const settings = parseTrainConfig(
    tinyTrainConfig({
      steps: 1,
      groupSize: 8,
      episode: { temperature: 1.7 },
      loss: { klBeta: 0.1 },
      // The step's gradients in one update: every metric is read before the weights move.
      update: { rows: 8, rowLength: 64, accumulate: true, miniBatches: 1 },
    }),
  );
  const store = await openStore(join(tempDir('spindle-kl-temperature-'), 'spindle.db'));
  const runId = await newTrainRun(store);
  const outcome = await trainRun({ spec: pickSpec, options: {}, settings, store, runId, resume: null });
  try {
    const step = metricsAt(await store.getMetrics(runId), 1);
    assert.equal(step['train/updates'], 1);
    assert.ok(step['tokens/trained'] > 0, 'the step trained');
    assert.ok(Math.abs(step['clip/ratio_mean'] - 1) < 1e-5, `ratio mean ${step['clip/ratio_mean']}`);
    assert.equal(step['clip/frac'], 0);
    // The policy is still the warm start, the reference: at the same temperature their KL is 0.
    assert.ok(Math.abs(step['kl/reference']) < 1e-6, `KL to the reference ${step['kl/reference']}`);
  } finally {
    await outcome.policy.close();
    await store.close();
  }
});
