/** `spindle train`'s config: defaults, flags over the file, and errors that name the field. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import { applyFlagOverrides, parseTrainConfig } from '../../src/train/train-config.ts';

test('defaults: GRPO with zero-variance groups dropped, clipped loss, KL to the warm start, warm start on', () => {
  const c = parseTrainConfig({});
  assert.equal(c.advantage.estimator, 'grpo');
  assert.equal(c.advantage.dropZeroVariance, true);
  assert.equal(c.loss.policyLoss, 'ppo_clip');
  assert.equal(c.loss.klBeta, 1);
  // Setting another loss field keeps the KL default; 0 turns it off.
  assert.equal(parseTrainConfig({ loss: { clipHigh: 0.3 } }).loss.klBeta, 1);
  assert.equal(parseTrainConfig({ loss: { klBeta: 0 } }).loss.klBeta, 0);
  assert.equal(c.warmStart.languageModel, true);
  assert.equal(c.groupSize, 16);
  assert.equal(c.episode.temperature, 1);
  assert.ok(c.warmStart.maxSteps > 0);
  assert.equal(c.threads, null);
});

test('flags override the file; the file fills what flags do not give', () => {
  const merged = applyFlagOverrides({ steps: 10, groupSize: 8, optimizer: { lr: 0.1, warmupSteps: 3 } }, { steps: 20, lr: 0.5, seed: 7 });
  const c = parseTrainConfig(merged);
  assert.equal(c.steps, 20);
  assert.equal(c.groupSize, 8);
  assert.equal(c.seed, 7);
  assert.equal(c.optimizer.lr, 0.5);
  assert.equal(c.optimizer.warmupSteps, 3);
});

test('a bad field is a UsageError naming it', () => {
  const cases: [unknown, RegExp][] = [
    [{ steps: -1 }, /train\.steps/],
    [{ groupSize: 0 }, /train\.groupSize/],
    [{ warmStart: { maxSteps: 'many' } }, /train\.warmStart\.maxSteps/],
    [{ optimizer: { lr: 0.1, betaOne: 0.9 } }, /train\.optimizer/],
    [{ optimizer: { lr: 0.1, decay: 'cosine' } }, /train\.optimizer\.totalSteps/],
    [{ loss: { lengthNorm: 'dr_grpo' } }, /train\.loss\.maxCompletionTokens/],
    [{ advantage: { estimator: 'ppo' } }, /train\.advantage/],
    [{ typo: 1 }, /train: .*typo|Unrecognized key/],
    [{ seed: 2 ** 40 }, /train\.seed/],
    [{ update: { rows: 0 } }, /train\.update\.rows/],
  ];
  for (const [config, message] of cases) {
    assert.throws(() => parseTrainConfig(config), (e: unknown) => e instanceof UsageError && message.test(e.message), JSON.stringify(config));
  }
  assert.throws(() => applyFlagOverrides([1, 2], {}), /train config: must be a JSON object/);
  assert.throws(() => applyFlagOverrides({ optimizer: 3 }, { lr: 0.1 }), /train\.optimizer: must be an object/);
});
