/**
 * The default model's context follows the env: the architecture's 1,024 unless the env's random
 * episodes need more (kelly's ten turns are ~1,260 tokens), and a configured length always wins;
 * its tokenizer cuts numbers as `model.digits` says.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kellySpec } from '../../src/envs/kelly/spec.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { createDefaultModel, defaultContextLength } from '../../src/train/default-model.ts';
import type { DigitSplit } from '../../src/model/tokenizer/tokenizer-json.ts';
import { trainConfigSchema } from '../../src/train/train-config.ts';

const tiny = { vocabSize: 400, hiddenSize: 32, intermediateSize: 64, numLayers: 1, numHeads: 2, numKvHeads: 1, headDim: 16 };

describe('default model context', () => {
  it('keeps the base context for short episodes and grows past it in multiples of 256 with a quarter to spare', () => {
    assert.equal(defaultContextLength(272, 1024), 1024);
    assert.equal(defaultContextLength(819, 1024), 1024); // 1,023.75 rounds up to 1,024
    assert.equal(defaultContextLength(820, 1024), 1280); // 1,025 needs the next multiple
    assert.equal(defaultContextLength(1262, 1024), 1792); // kelly's longest: 1,577.5 → 1,792
    assert.equal(defaultContextLength(2094, 1024), 2816); // market's longest: 2,617.5 → 2,816
    assert.equal(defaultContextLength(0, 128), 128);
  });

  it('sizes the context from the longest random episode of a ten-turn env', async () => {
    const model = await createDefaultModel({ spec: kellySpec, options: kellySpec.options.parse({}), seed: 1, corpusEpisodes: 6, shape: tiny });
    const { longestText } = model.corpus;
    assert.ok(longestText > 1024, `a kelly episode is longer than 1,024 tokens (got ${longestText})`);
    assert.equal(model.assets.cfg.maxPositionEmbeddings, defaultContextLength(longestText, 1024));
    assert.ok(model.assets.cfg.maxPositionEmbeddings >= longestText * 1.25);
  });

  it('leaves Blackjack at 1,024 and lets a configured context win', async () => {
    const blackjack = await createDefaultModel({ spec: blackjackSpec, options: blackjackSpec.options.parse({}), seed: 1, corpusEpisodes: 6, shape: tiny });
    assert.equal(blackjack.assets.cfg.maxPositionEmbeddings, 1024);
    const kelly = await createDefaultModel({ spec: kellySpec, options: kellySpec.options.parse({}), seed: 1, corpusEpisodes: 6, shape: { ...tiny, maxPositionEmbeddings: 512 } });
    assert.equal(kelly.assets.cfg.maxPositionEmbeddings, 512);
  });

  it("model.digits reaches the tokenizer: 'single' cuts each digit of kelly's numbers, the default keeps runs", async () => {
    const make = (digits?: DigitSplit) =>
      createDefaultModel({ spec: kellySpec, options: kellySpec.options.parse({}), seed: 1, corpusEpisodes: 6, shape: { ...tiny, digits } });
    const [single, runs] = await Promise.all([make('single'), make()]);
    const multiDigit = (model: typeof single) => {
      const t = model.assets.tokenizer;
      return Array.from({ length: t.vocabSize }, (_, id) => t.decode([id])).filter((text) => /\d\d/.test(text));
    };
    assert.deepEqual(multiDigit(single), []);
    assert.ok(multiDigit(runs).length > 0, 'the default learns tokens of several digits');
    assert.deepEqual(single.assets.tokenizer.encode(' 0.63').map((id) => single.assets.tokenizer.decode([id])), [' 0', '.', '6', '3']);
    assert.throws(() => trainConfigSchema.parse({ model: { digits: 'pairs' } }), /digits/);
  });
});
