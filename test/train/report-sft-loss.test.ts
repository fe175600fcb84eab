/**
 * Supervised targets beside RL samples in one layout (report.mode 'supervised'): the layout's sftMask
 * is aligned with the targets like the RL mask, and the step's loss is the RL loss plus the weighted
 * mean NLL of the supervised targets, computed in the same forward. The step's metrics average the
 * supervised figures over the updates that had supervised targets and the RL ones over those with RL tokens.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { AdvantageStats } from '../../src/advantage/normalize.ts';
import { initEngine, tree, type Tensor } from '../../src/model/engine.ts';
import { sequenceLogprobs } from '../../src/model/logprobs.ts';
import type { StepResult } from '../../src/model/param-trainer.ts';
import { toParams } from '../../src/model/params.ts';
import { parseLossConfig } from '../../src/train/loss-config.ts';
import { buildRlLayouts, sharedPrefixLength, type LayoutSample, type RlLayout } from '../../src/train/rl-batch.ts';
import { rlTensors } from '../../src/train/rl-batch-forward.ts';
import { rlLoss } from '../../src/train/trainer-loss.ts';
import { updateMetrics } from '../../src/train/trainer-metrics.ts';
import type { SampleStats } from '../../src/train/samples-types.ts';
import { randomHostParams, tinyConfig } from '../model/model-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const cfg = tinyConfig('qwen3');
const prefix = [5, 9, 2, 11, 30, 7, 7, 3];

/** An RL sample: prompt = shared prefix + own part, completion trained by RL. */
function rlSample(own: number[], completion: number[], advantage: number): LayoutSample {
  const p = prefix.length + own.length;
  const tokens = [...prefix, ...own, ...completion];
  return {
    tokens,
    lossMask: tokens.map((_, i) => (i >= p ? 1 : 0)),
    advantages: tokens.map((_, i) => (i >= p ? advantage : 0)),
    logprobs: tokens.map((_, i) => (i >= p ? -2.5 : 0)),
  };
}

/** A supervised sample: no RL target, the completion supervised. */
function sftSample(own: number[], completion: number[]): LayoutSample & { completion: number[] } {
  const p = prefix.length + own.length;
  const tokens = [...prefix, ...own, ...completion];
  return { tokens, completion, lossMask: tokens.map(() => 0), sftMask: tokens.map((_, i) => (i >= p ? 1 : 0)) };
}

const rl = [rlSample([1, 2, 3], [4, 5, 6, 7], 0.8), rlSample([8], [9, 10], -0.6)];
const sft = [sftSample([12, 13], [17, 18, 19]), sftSample([23, 24, 25, 26], [21, 22])];
const mixed: LayoutSample[] = [rl[0], sft[0], rl[1], sft[1]];

test('layout: sftMask is aligned with the targets beside the RL mask; RL-only layouts carry none', () => {
  const [layout, ...rest] = buildRlLayouts(mixed, { rows: 4, lengthMultiple: 16, minLength: 16 });
  assert.equal(rest.length, 0);
  assert.equal(layout.prefix.length, prefix.length);
  assert.ok(layout.sftMask, 'a layout with supervised samples has an sftMask');
  const P = layout.prefix.length;
  for (const { sample, row, start, inputs } of layout.placements) {
    const s = mixed[sample];
    for (let j = 0; j < inputs; j++) {
      const at = row * layout.length + start + j;
      assert.equal(layout.targetIds[at], s.tokens[P + j + 1]);
      assert.equal(layout.mask[at], s.lossMask[P + j + 1], `RL mask of sample ${sample} at ${j}`);
      assert.equal(layout.sftMask[at], s.sftMask?.[P + j + 1] ?? 0, `sftMask of sample ${sample} at ${j}`);
      // A supervised target takes no advantage and no sampling logprob.
      if (s.sftMask) assert.deepEqual([layout.advantages[at], layout.samplingLogprobs[at], layout.sequenceLengths[at]], [0, 0, 0]);
    }
  }
  const sum = (a: Float32Array) => a.reduce((x, y) => x + y, 0);
  assert.equal(sum(layout.sftMask), 3 + 2);
  assert.equal(sum(layout.mask), 4 + 2);

  const [rlOnly] = buildRlLayouts(rl, { rows: 4, lengthMultiple: 16, minLength: 16 });
  assert.equal(rlOnly.sftMask, undefined);
  const t = rlTensors(cfg, rlOnly);
  assert.ok(!('sftMask' in t), 'no sftMask tensor (jit rejects an undefined leaf)');
  tree.dispose(t);
});

test('the shared prefix stops before the first supervised target too', () => {
  const early: LayoutSample = { tokens: [...prefix.slice(0, 5), 40, 41], lossMask: [0, 0, 0, 0, 0, 0, 0], sftMask: [0, 0, 0, 0, 1, 1, 1] };
  assert.equal(sharedPrefixLength([...mixed, early]), 3);
  assert.throws(() => buildRlLayouts([{ ...early, sftMask: [1] }], { rows: 1 }), /sftMask values/);
});

/** The value of a scalar tensor (consumed). */
async function scalar(t: Tensor): Promise<number> {
  return (await t.data())[0];
}

test('loss = RL loss + weight × mean NLL of the supervised targets (hand-computed)', async () => {
  const params = toParams(randomHostParams(cfg, 5));
  const settings = parseLossConfig({ lengthNorm: 'grpo' });
  const [layout] = buildRlLayouts(mixed, { rows: 4, lengthMultiple: 16, minLength: 16 });

  // The supervised targets' logprobs from the plain full-sequence forward.
  const reference = await sequenceLogprobs(cfg, params, sft.map((s) => ({ promptIds: s.tokens.slice(0, -s.completion.length), completionIds: s.completion })));
  const lps = reference.logprobs.flat();
  assert.equal(lps.length, 5);
  const nll = -lps.reduce((a, b) => a + b, 0) / lps.length;

  const weight = 0.7;
  const [withSft, metrics] = rlLoss(cfg, settings, { sftWeight: weight })(tree.ref(params), rlTensors(cfg, layout));
  const plainInputs = rlTensors(cfg, layout);
  plainInputs.sftMask!.dispose();
  delete plainInputs.sftMask;
  const [rlOnly, rlMetrics] = rlLoss(cfg, settings, { sftWeight: weight })(tree.ref(params), plainInputs);

  const total = await scalar(withSft);
  const rlValue = await scalar(rlOnly);
  assert.ok(Math.abs(rlValue) > 1e-3, `the RL part is not trivially 0 (${rlValue})`);
  assert.ok(Math.abs(total - (rlValue + weight * nll)) < 1e-4, `${total} vs ${rlValue} + ${weight} × ${nll}`);
  assert.ok(Math.abs((await scalar(metrics.sftLoss)) - nll) < 1e-4);
  assert.equal(await scalar(metrics.sftTokens), 5);
  assert.ok(!('sftLoss' in rlMetrics));
  // The RL figures are those of the RL tokens alone.
  assert.ok(Math.abs((await scalar(metrics.policyLoss)) - (await scalar(rlMetrics.policyLoss))) < 1e-6);
  tree.dispose(params);
});

test('the loss rejects a negative or non-finite weight', () => {
  const settings = parseLossConfig({});
  assert.throws(() => rlLoss(cfg, settings, { sftWeight: -1 }), /sftWeight/);
  assert.throws(() => rlLoss(cfg, settings, { sftWeight: Number.NaN }), /sftWeight/);
});

test('step metrics: supervised figures over updates with supervised targets, RL figures over updates with RL tokens', () => {
  const [rlLayout] = buildRlLayouts(rl, { rows: 2, lengthMultiple: 16, minLength: 16 });
  const [sftLayout] = buildRlLayouts(sft, { rows: 2, lengthMultiple: 16, minLength: 16 });
  const [mixedLayout] = buildRlLayouts(mixed, { rows: 4, lengthMultiple: 16, minLength: 16 });
  const result = (metrics: Record<string, number>): StepResult => ({ loss: 1, gradNorm: 1, learningRate: 1e-3, metrics });
  const updates: { result: StepResult; layout: RlLayout }[] = [
    { result: result({ ratioMean: 1.1, policyLoss: 0.2 }), layout: rlLayout },
    { result: result({ ratioMean: 0, policyLoss: 0, sftLoss: 3, sftTokens: 5 }), layout: sftLayout },
    { result: result({ ratioMean: 0.9, policyLoss: 0.4, sftLoss: 2, sftTokens: 3 }), layout: mixedLayout },
  ];
  const stats = { samples: 0, trainedCalls: 0, calls: 0, packedShare: 0, trainedTokens: 0, tokens: 0 } as SampleStats;
  const advantage = { mean: 0, std: 0, min: 0, max: 0, count: 0, groups: 0, zeroVarianceGroups: 0, singletonGroups: 0, droppedGroups: 0 } as AdvantageStats;
  const m = updateMetrics(updates, advantage, stats);
  assert.ok(Math.abs(m['clip/ratio_mean'] - 1) < 1e-12, `ratio mean over the two RL updates: ${m['clip/ratio_mean']}`);
  assert.ok(Math.abs(m['train/policy_loss'] - 0.3) < 1e-12);
  assert.equal(m['train/sft_loss'], 2.5);
  assert.equal(m['train/sft_tokens'], 4);
  assert.equal(m['train/updates'], 3);
});
