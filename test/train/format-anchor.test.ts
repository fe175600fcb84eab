/**
 * The format anchor (format-anchor.ts): the targets are the answer tokens every legal action's
 * answer shares, never the ones that name the action; a step adds it only when its answers turned
 * illegal, draws the same decisions for the same step, and trains them by likelihood.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { Message, ToolSpec } from '../../src/core/messages.ts';
import { initEngine } from '../../src/model/engine.ts';
import { openStore } from '../../src/store/open.ts';
import { createDefaultModel } from '../../src/train/default-model.ts';
import { FormatAnchor, formatAnchorSchema, sharedFormatMask } from '../../src/train/format-anchor.ts';
import { parseTrainConfig } from '../../src/train/train-config.ts';
import { trainRun, WARM_START_PATH } from '../../src/train/trainer.ts';
import { loadWarmStartSource } from '../../src/train/warm-start-reuse.ts';
import { tempDir } from '../fixtures/temp-dir.ts';
import { learnedWarmStart, newTrainRun, pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

test('sharedFormatMask: the common token prefix and suffix of every answer, of the first answer', () => {
  assert.deepEqual(sharedFormatMask([[1, 2, 3, 9, 4, 5], [1, 2, 7, 4, 5], [1, 2, 8, 8, 4, 5]]), [1, 1, 0, 0, 1, 1]);
  // Where the second differs nearer the ends, the shared part shrinks to what all have in common.
  assert.deepEqual(sharedFormatMask([[1, 2, 3, 4, 5], [1, 6, 3, 4, 5], [1, 2, 3, 7, 5]]), [1, 0, 0, 0, 1]);
  assert.deepEqual(sharedFormatMask([[1, 2, 3]]), [1, 1, 1]);
  assert.deepEqual(sharedFormatMask([[4, 5], [6, 7]]), [0, 0]);
  assert.deepEqual(sharedFormatMask([]), []);
});

test('the schema: defaults, and a bad field named', () => {
  assert.deepEqual(formatAnchorSchema.parse({}), { invalidRate: 0.1, decisions: 32, episodes: 64 });
  assert.throws(() => parseTrainConfig({ formatAnchor: { invalidRate: 1 } }), /train\.formatAnchor\.invalidRate: must be < 1/);
  assert.throws(() => parseTrainConfig({ formatAnchor: { decisions: 0 } }), /train\.formatAnchor\.decisions: must be ≥ 1/);
  assert.throws(() => parseTrainConfig({ formatAnchor: { pool: 3 } }), /train\.formatAnchor/);
  assert.equal(parseTrainConfig({ formatAnchor: { invalidRate: null } }).formatAnchor.invalidRate, null);
});

test('the pool: each decision of random-policy episodes, its action-naming tokens never a target', async () => {
  const model = await createDefaultModel({ spec: pickSpec, options: {}, seed: 1, corpusEpisodes: 30, shape: parseTrainConfig(tinyTrainConfig()).model });
  const { assets } = model;
  const promptIds = (messages: Message[], tools: ToolSpec[]) => assets.tokenizer.encode(assets.chatTemplate.render(messages, { tools, addGenerationPrompt: true }));
  const anchor = new FormatAnchor({ spec: pickSpec, options: {}, assets, promptIds, maxTurns: 1, runSeed: 3, settings: { invalidRate: 0.1, decisions: 12, episodes: 20 } });
  assert.equal(anchor.triggers(0.1), false);
  assert.equal(anchor.triggers(0.11), true);
  assert.equal(anchor.poolSize, 0, 'built on first use');
  const samples = await anchor.samples(5);
  assert.equal(anchor.poolSize, 20, 'one decision per pick episode, each with 3 legal actions');
  assert.equal(samples.length, 12);
  assert.deepEqual(await anchor.samples(5), samples, 'the same step draws the same decisions');
  assert.notDeepEqual(await anchor.samples(6), samples);
  for (const s of samples) {
    assert.ok(s.lossMask.every((m) => m === 0), 'nothing in the RL term');
    const sft = s.sftMask!;
    const start = sft.indexOf(1);
    const completion = s.tokens.slice(start);
    const mask = sft.slice(start);
    const text = assets.tokenizer.decode(completion);
    const held = assets.tokenizer.decode(completion.filter((_, i) => mask[i] === 0));
    // The answer names its pick (1, 2 or 3) in the untrained tokens, and the trained ones hold the call's frame.
    const pick = /"n": ?(\d)/.exec(text)?.[1];
    assert.ok(pick !== undefined, `the answer is a pick call: ${text}`);
    assert.ok(held.includes(pick), `the pick ${pick} is not a target (untrained: '${held}')`);
    assert.ok(!assets.tokenizer.decode(completion.filter((_, i) => mask[i] === 1)).includes(pick), 'no target names the pick');
    assert.ok(mask.filter((m) => m === 1).length >= mask.length - 3, `the frame is trained: ${mask}`);
    assert.equal(mask.at(-1), 1, 'the end-of-turn token is a target');
  }
});

test('a run whose answers all turned malformed: the anchor restores the format, RL alone does not', async () => {
  // A warm start that learns the format (no invalid answer in its check), then one frame token broken
  // as one update broke natural Blackjack's: `}}\n`'s embedding (tied to its output row) negated, so
  // after the pick comes something else, every answer is refused and every group ties at −1.
  const base = tinyTrainConfig({
    steps: 0,
    evalEvery: 1000,
    warmStart: learnedWarmStart,
  });
  const store = await openStore(join(tempDir('spindle-anchor-'), 'spindle.db'));
  try {
    const warm = await newTrainRun(store);
    await (await trainRun({ spec: pickSpec, options: {}, settings: parseTrainConfig(base), store, runId: warm, resume: null })).policy.close();
    const rlWith = async (formatAnchor: object) => {
      const source = loadWarmStartSource(warm, join(store.runDir(warm), WARM_START_PATH), 'pick', {});
      const [frame] = source.assets.tokenizer.encode('}}\n');
      assert.equal(source.assets.tokenizer.decode([frame]), '}}\n', 'one token closes the call');
      const embedding = source.params['model.embed_tokens.weight'];
      const width = embedding.shape[1];
      for (let j = 0; j < width; j++) embedding.data[frame * width + j] *= -1;
      const runId = await newTrainRun(store);
      const settings = parseTrainConfig({ ...base, steps: 36, formatAnchor });
      await (await trainRun({ spec: pickSpec, options: {}, settings, store, runId, resume: null, warmStartFrom: source })).policy.close();
      const metrics = await store.getMetrics(runId);
      return (name: string) => metrics.filter((m) => m.name === name && m.step > 0).map((m) => m.value);
    };
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

    const off = await rlWith({ invalidRate: null });
    assert.ok(off('actions/invalid_rate')[0] === 1, 'every answer of the broken model is refused');
    assert.ok(mean(off('actions/invalid_rate').slice(-8)) > 0.9, `without the anchor the format stays broken: ${off('actions/invalid_rate')}`);
    assert.ok(off('samples/invalid_penalized').every((n) => n > 0), 'the refused answers of tied groups were trained at the penalty all along');
    assert.deepEqual(off('train/sft_loss'), []);

    const on = await rlWith({ invalidRate: 0.1, decisions: 32, episodes: 20 });
    const invalid = on('actions/invalid_rate');
    assert.equal(invalid[0], 1);
    assert.ok(mean(invalid.slice(-8)) < 0.4, `the anchor restores the format: ${invalid}`);
    assert.deepEqual(on('samples/format_anchor'), invalid.map((r) => (r > 0.1 ? 32 : 0)), 'only steps above the threshold add it');
    const loss = on('train/sft_loss');
    assert.ok(loss.length > 0 && loss.every((v) => Number.isFinite(v)) && loss.at(-1)! < loss[0] / 10, `its loss falls: ${loss}`);
  } finally {
    await store.close();
  }
});
