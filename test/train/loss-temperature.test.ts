/**
 * Rollouts sampled at a temperature T ≠ 1 are trained as softmax(logits / T), the distribution
 * that sampled them: the loss's logprobs and the frozen forward's equal the sampler's recorded
 * ones, so the ratio starts at 1 and no token is clipped before the weights move. At T = 1 the
 * same samples would start off the ratio's trust region.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initEngine, tree } from '../../src/model/engine.ts';
import { Sampler } from '../../src/model/sampler.ts';
import { parseLossConfig } from '../../src/train/loss-config.ts';
import { rlLogprobs, rlTensors } from '../../src/train/rl-batch-forward.ts';
import { buildRlLayouts, sampleTargetValues, type LayoutSample } from '../../src/train/rl-batch.ts';
import { frozenLogprobs, logprobsOnLayout, rlLoss } from '../../src/train/trainer-loss.ts';
import { maxAbsDiff, samplerConfig, samplerParams, tokens } from '../model/sampler-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const T = 1.6;

test('samples drawn at T: the loss at T starts at ratio 1 with nothing clipped; at T = 1 it does not', async () => {
  const cfg = samplerConfig();
  const params = samplerParams(cfg);
  const sampler = new Sampler(cfg, tree.ref(params), { blockSize: 8, seed: 1, sequenceCache: false });
  const promptIds = tokens(12, 5);
  const drawn = (await sampler.generate([{ promptIds, n: 4, maxTokens: 10, temperature: T, seed: 4 }]))[0];
  sampler.dispose();
  const samples: LayoutSample[] = drawn.map((d, j) => {
    const ids = [...promptIds, ...d.tokenIds];
    const trained = (i: number) => i >= promptIds.length;
    return {
      tokens: ids,
      lossMask: ids.map((_, i) => (trained(i) ? 1 : 0)),
      // Both signs, so either clip bound could act.
      advantages: ids.map((_, i) => (trained(i) ? (j % 2 === 0 ? 1 : -1) : 0)),
      logprobs: ids.map((_, i) => (trained(i) ? d.logprobs[i - promptIds.length] : 0)),
    };
  });
  const [layout, ...rest] = buildRlLayouts(samples, { rows: 4, lengthMultiple: 16, minLength: 16 });
  assert.equal(rest.length, 0);

  // The frozen forward at T reproduces the sampling logprobs; at 1, the untempered model's.
  const tensors = rlTensors(cfg, layout);
  const recorded = async (temperature: number) => sampleTargetValues(layout, samples, await logprobsOnLayout(frozenLogprobs(cfg, temperature), params, tensors).data());
  const atT = await recorded(T);
  const at1 = await recorded(1);
  tree.dispose(tensors);
  drawn.forEach((d, i) => {
    assert.ok(maxAbsDiff(atT.get(i)!, d.logprobs) < 1e-4, `sample ${i}: frozen forward at T ${atT.get(i)} vs sampled ${d.logprobs}`);
    assert.ok(maxAbsDiff(at1.get(i)!, d.modelLogprobs) < 1e-4, `sample ${i}: frozen forward at 1 vs the model's logprobs`);
  });

  const settings = parseLossConfig({});
  const metricsAt = async (temperature: number) => {
    const [loss, metrics] = rlLoss(cfg, settings, { temperature })(tree.ref(params), rlTensors(cfg, layout));
    loss.dispose();
    const values: Record<string, number> = {};
    for (const [name, m] of Object.entries(metrics)) values[name] = (await m.data())[0];
    return values;
  };
  const onPolicy = await metricsAt(T);
  assert.ok(Math.abs(onPolicy.ratioMean - 1) < 1e-5, `ratio mean ${onPolicy.ratioMean}`);
  assert.ok(onPolicy.approxKl < 1e-6, `k3 to the sampler ${onPolicy.approxKl}`);
  assert.equal(onPolicy.clipFracLow, 0);
  assert.equal(onPolicy.clipFracHigh, 0);
  // Scored untempered, the sampled tokens sit away from ratio 1 and the clip cuts some of them.
  const untempered = await metricsAt(1);
  assert.ok(untempered.approxKl > 1e-2, `k3 to the sampler at T = 1: ${untempered.approxKl}`);
  assert.ok(untempered.clipFracLow + untempered.clipFracHigh > 0, `clipped at T = 1: ${untempered.clipFracLow} + ${untempered.clipFracHigh}`);
  tree.dispose(params);
});

test('rlLogprobs refuses a temperature that is not a finite number > 0', () => {
  const cfg = samplerConfig();
  const [layout] = buildRlLayouts([{ tokens: [1, 2, 3], lossMask: [0, 1, 1] }], { rows: 1, lengthMultiple: 16, minLength: 16 });
  for (const temperature of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
    const params = samplerParams(cfg);
    const t = rlTensors(cfg, layout);
    assert.throws(() => rlLogprobs(cfg, params, t, { temperature }), /temperature must be a finite number > 0/);
    tree.dispose([params, t]);
  }
});
