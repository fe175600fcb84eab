/**
 * The trainer's batch layout and shared-prefix forward: a prefix computed once and broadcast to
 * packed rows gives the same logprobs, entropies and gradients as the plain full-sequence forward.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initEngine, jit, tree, valueAndGrad, type Tensor } from '../../src/model/engine.ts';
import { sequenceLogprobs, batchTensors, tokenLogprobs } from '../../src/model/logprobs.ts';
import { toHostParams, toParams, type Params } from '../../src/model/params.ts';
import { buildTokenBatch, type SequenceSample } from '../../src/model/token-batch.ts';
import { buildRlLayouts, LayoutShapes, sampleTargetValues, sharedPrefixLength, type LayoutSample, type RlLayout } from '../../src/train/rl-batch.ts';
import { rlLogprobs, rlTensors } from '../../src/train/rl-batch-forward.ts';
import { parseLossConfig } from '../../src/train/loss-config.ts';
import { frozenLogprobs, logprobsOnLayout, rlLoss } from '../../src/train/trainer-loss.ts';
import { maxAbsDiff, randomHostParams, tinyConfig } from '../model/model-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const cfg = tinyConfig('qwen3');
const prefix = [5, 9, 2, 11, 30, 7, 7, 3];

/** Prompt = shared prefix + a per-sample part; completion masked. */
function sample(own: number[], completion: number[]): LayoutSample & { promptIds: number[]; completionIds: number[] } {
  const promptIds = [...prefix, ...own];
  const tokens = [...promptIds, ...completion];
  return {
    promptIds,
    completionIds: completion,
    tokens,
    lossMask: tokens.map((_, i) => (i >= promptIds.length ? 1 : 0)),
    advantages: tokens.map((_, i) => (i >= promptIds.length ? 0.5 : 0)),
    logprobs: tokens.map((_, i) => (i >= promptIds.length ? -1 : 0)),
  };
}

const samples = [
  sample([1, 2, 3], [4, 5, 6, 7]),
  sample([8], [9, 10]),
  sample([12, 13, 14, 15, 16], [17, 18, 19, 20, 21, 22]),
  sample([23, 24], [25]),
];

test('the shared prefix stops before the first trained token of any sample', () => {
  assert.equal(sharedPrefixLength(samples), prefix.length);
  const early = { tokens: [...prefix.slice(0, 4), 1, 2], lossMask: [0, 0, 0, 1, 1, 1] };
  assert.equal(sharedPrefixLength([...samples, early]), 2);
  assert.equal(sharedPrefixLength(samples, 5), 5);
});

test('layout: fixed rows, packed sequences, arrays aligned with targets', () => {
  const [layout, ...rest] = buildRlLayouts(samples, { rows: 4, lengthMultiple: 16, minLength: 16 });
  assert.equal(rest.length, 0);
  assert.equal(layout.prefix.length, prefix.length);
  assert.equal(layout.length, 16);
  assert.equal(layout.rows, 4);
  // Every sample's first row input is the token right after the prefix.
  samples.forEach((s, i) => {
    const p = layout.placements.find((q) => q.sample === i)!;
    assert.equal(layout.inputIds[p.row * layout.length + p.start], s.tokens[prefix.length]);
    assert.equal(p.inputs, s.tokens.length - 1 - prefix.length);
  });
  const trained = samples.reduce((n, s) => n + s.completionIds.length, 0);
  assert.equal(layout.mask.reduce((a, b) => a + b, 0), trained);
  assert.equal(layout.advantages.reduce((a, b) => a + b, 0), 0.5 * trained);
  assert.equal(layout.samplingLogprobs.reduce((a, b) => a + b, 0), -trained);
  assert.equal(layout.computedTokens, prefix.length + samples.reduce((n, s) => n + s.tokens.length - 1 - prefix.length, 0));
  // Row inputs 6, 2, 10, 2 in rows of 16: first fit puts 6 + 2 in row 0, 10 in row 1, the last 2 back in row 0.
  assert.deepEqual(layout.placements.map((p) => p.row), [0, 0, 1, 0]);
  // Per-sequence trained counts for length normalisation of packed rows.
  const p2 = layout.placements[2];
  assert.equal(layout.sequenceLengths[p2.row * layout.length + p2.start], samples[2].completionIds.length);
});

test('layout: tokenWeights carries each sample\'s weight at its positions (0 on padding); sequenceLengths stay unweighted', () => {
  const weighted = [{ ...samples[0], weight: 3 }, samples[1], { ...samples[2], weight: 2 }, samples[3]];
  const [layout] = buildRlLayouts(weighted, { rows: 4, lengthMultiple: 16, minLength: 16 });
  const [plain] = buildRlLayouts(samples, { rows: 4, lengthMultiple: 16, minLength: 16 });
  assert.deepEqual(layout.placements, plain.placements);
  const expected = new Float32Array(layout.rows * layout.length);
  for (const { sample, row, start, inputs } of layout.placements) expected.fill(weighted[sample].weight ?? 1, row * layout.length + start, row * layout.length + start + inputs);
  assert.deepEqual(layout.tokenWeights, expected);
  assert.equal(layout.tokenWeights.reduce((a, b) => a + b, 0), 3 * 6 + 2 + 2 * 10 + 2);
  // Everything else is the unweighted layout's: the mask stays 0/1, the lengths count tokens once.
  assert.deepEqual(layout.sequenceLengths, plain.sequenceLengths);
  assert.deepEqual(layout.mask, plain.mask);
  assert.deepEqual(plain.tokenWeights, Float32Array.from(plain.segmentIds, (s) => (s >= 0 ? 1 : 0)));
  const p0 = layout.placements[0];
  assert.equal(layout.sequenceLengths[p0.row * layout.length + p0.start], samples[0].completionIds.length);
  assert.throws(() => buildRlLayouts([{ ...samples[0], weight: 0 }], { rows: 1 }), /weight 0/);
  const t = rlTensors(cfg, layout);
  assert.deepEqual(t.tokenWeights.shape, [1, layout.targetSlots]);
  tree.dispose(t);
});

test('layout: explored is 1 at the trained targets of explored samples only, and present only when a sample is explored', async () => {
  const marked = [samples[0], { ...samples[1], explored: true }, samples[2], { ...samples[3], explored: true }];
  const [layout] = buildRlLayouts(marked, { rows: 4, lengthMultiple: 16, minLength: 16 });
  const expected = new Float32Array(layout.rows * layout.length);
  for (const at of layout.targetPositions) {
    const p = layout.placements.find((q) => q.row === Math.floor(at / layout.length) && at % layout.length >= q.start && at % layout.length < q.start + q.inputs)!;
    if (marked[p.sample].explored) expected[at] = 1;
  }
  assert.deepEqual(layout.explored, expected);
  assert.equal(expected.reduce((a, b) => a + b, 0), samples[1].completionIds.length + samples[3].completionIds.length);
  const t = rlTensors(cfg, layout);
  assert.deepEqual(Array.from(await t.explored!.ref.data()).slice(0, layout.targetPositions.length), Array.from(layout.targetPositions, (at) => expected[at]));
  tree.dispose(t);
  const [plain] = buildRlLayouts(samples, { rows: 4, lengthMultiple: 16, minLength: 16 });
  assert.equal(plain.explored, undefined);
  const tp = rlTensors(cfg, plain);
  assert.equal(tp.explored, undefined);
  tree.dispose(tp);
});

test('layout: the target slots hold the trained positions in row order, padded to a quarter of the layout', async () => {
  const [layout] = buildRlLayouts(samples, { rows: 4, lengthMultiple: 16, minLength: 16 });
  const trained = Array.from(layout.mask.keys()).filter((i) => layout.mask[i] === 1);
  assert.deepEqual(Array.from(layout.targetPositions), trained);
  assert.equal(trained.length, 13);
  // 13 targets in a 4 × 16 layout: slots in steps of 16, so 16.
  assert.equal(layout.targetSlots, 16);
  const t = rlTensors(cfg, layout);
  assert.deepEqual(Array.from(await t.targetIndex.ref.data()), [...trained, 0, 0, 0]);
  assert.deepEqual(Array.from(await t.mask.ref.data()), [...trained.map(() => 1), 0, 0, 0]);
  const pad = layout.targetIds[0];
  assert.deepEqual(Array.from(await t.targets.ref.data()), [...trained.map((i) => layout.targetIds[i]), pad, pad, pad]);
  assert.deepEqual(Array.from(await t.advantages.ref.data()), [...trained.map(() => 0.5), 0, 0, 0]);
  tree.dispose(t);
  // A layout with no trained target keeps one slot's step.
  const [empty] = buildRlLayouts([{ tokens: [1, 2, 3], lossMask: [0, 0, 0] }], { rows: 4, lengthMultiple: 16, minLength: 16 });
  assert.equal(empty.targetPositions.length, 0);
  assert.equal(empty.targetSlots, 16);
});

test('rlLoss on a layout with a weighted sample equals the layout with the sample repeated: loss, metrics, gradients', async () => {
  const params = toParams(randomHostParams(cfg, 6));
  const settings = parseLossConfig({ lengthNorm: 'grpo' });
  const lossAndGrad = jit(valueAndGrad(rlLoss(cfg, settings), { hasAux: true })) as unknown as (
    p: Params,
    b: ReturnType<typeof rlTensors>,
  ) => [[Tensor, Record<string, Tensor>], Params];
  const run = async (list: LayoutSample[]) => {
    const [layout, ...rest] = buildRlLayouts(list, { rows: 4, lengthMultiple: 16, minLength: 16 });
    assert.equal(rest.length, 0);
    const [[loss, metrics], grads] = lossAndGrad(tree.ref(params), rlTensors(cfg, layout));
    const values: Record<string, number> = {};
    for (const [name, m] of Object.entries(metrics)) values[name] = (await m.data())[0];
    return { loss: (await loss.data())[0], metrics: values, grads: await toHostParams(grads) };
  };
  const w = await run([{ ...samples[0], weight: 2 }, samples[1], samples[2], samples[3]]);
  const d = await run([samples[0], samples[0], samples[1], samples[2], samples[3]]);
  assert.ok(Math.abs(d.loss) > 1e-3, `the loss is not trivially 0 (${d.loss})`);
  assert.ok(Math.abs(w.loss - d.loss) < 1e-5, `loss ${w.loss} vs ${d.loss}`);
  for (const [name, value] of Object.entries(d.metrics)) assert.ok(Math.abs(w.metrics[name] - value) < 1e-5, `${name}: ${w.metrics[name]} vs ${value}`);
  for (const name of Object.keys(d.grads)) {
    const scale = Math.max(1e-3, ...Array.from(d.grads[name].data, Math.abs));
    assert.ok(maxAbsDiff(w.grads[name].data, d.grads[name].data) / scale < 1e-4, `gradient of ${name}`);
  }
  tree.dispose(params);
});

test('a batch larger than one layout fills several of the same shape', () => {
  const layouts = buildRlLayouts(samples, { rows: 1, lengthMultiple: 16, minLength: 16 });
  assert.deepEqual(layouts.map((l) => [l.rows, l.length]), [[1, 16], [1, 16]]);
  assert.deepEqual(layouts.map((l) => l.placements.map((p) => p.sample)), [[0, 1], [2, 3]]);
  // The last layout keeps the rows it uses, rounded up to rowMultiple (full layouts keep `rows`).
  const many = Array.from({ length: 11 }, (_, i) => sample([1 + i], [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]));
  assert.deepEqual(buildRlLayouts(many, { rows: 4, rowMultiple: 2, lengthMultiple: 16, minLength: 16 }).map((l) => l.rows), [4, 4, 4]);
  assert.deepEqual(buildRlLayouts(many.slice(0, 9), { rows: 4, rowMultiple: 2, lengthMultiple: 16, minLength: 16 }).map((l) => l.rows), [4, 4, 2]);
  assert.deepEqual(buildRlLayouts(many.slice(0, 9), { rows: 4, lengthMultiple: 16, minLength: 16 }).map((l) => l.rows), [4, 4, 4]);
  // One shape per run: fixed rows and length, a prefix that never grows; too long sequences are counted.
  const shapes = new LayoutShapes({ rows: 4, length: 16, prefixMultiple: 4 });
  const first = shapes.layouts(samples);
  assert.deepEqual([first.layouts.length, first.layouts[0].rows, first.layouts[0].length, first.layouts[0].prefix.length, first.tooLong], [1, 4, 16, 8, 0]);
  const longer = [...samples, sample([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17], [1])];
  const second = shapes.layouts(longer);
  assert.deepEqual([second.layouts[0].rows, second.layouts[0].length, second.tooLong], [4, 16, 1]);
  const shorterPrefix = shapes.layouts([...samples, { tokens: [5, 9, 2, 11, 1, 1, 1], lossMask: [0, 0, 0, 0, 0, 1, 1] }]);
  assert.equal(shorterPrefix.layouts[0].prefix.length, 4);
  assert.equal(shapes.layouts(samples).layouts[0].prefix.length, 4);
});

/** The layout's logprobs and entropies, sample by sample, equal the full-sequence forward's (random weights from `seed`). */
async function assertLogprobsMatchFull(layout: RlLayout, list: readonly (LayoutSample & SequenceSample)[], seed: number): Promise<void> {
  const params = toParams(randomHostParams(cfg, seed));
  const reference = await sequenceLogprobs(cfg, params, list, { entropy: true });
  const t = rlTensors(cfg, layout);
  for (const name of ['mask', 'advantages', 'samplingLogprobs', 'sequenceLengths', 'tokenWeights'] as const) t[name].dispose();
  const out = rlLogprobs(cfg, tree.ref(params), t, { entropy: true });
  const lp = sampleTargetValues(layout, list, await out.logprobs.data());
  const ent = sampleTargetValues(layout, list, await out.entropy!.data());
  for (let i = 0; i < list.length; i++) {
    assert.ok(maxAbsDiff(lp.get(i)!, reference.logprobs[i]) < 1e-4, `logprobs of sample ${i}`);
    assert.ok(maxAbsDiff(ent.get(i)!, reference.entropy![i]) < 1e-4, `entropy of sample ${i}`);
  }
  tree.dispose(params);
}

/** The value and gradients of the masked logprobs' negated sum on the layout equal the full-sequence forward's. */
async function assertGradientsMatchFull(layout: RlLayout, list: readonly (LayoutSample & SequenceSample)[], seed: number): Promise<void> {
  const params = toParams(randomHostParams(cfg, seed));
  const loss = (p: Params, b: ReturnType<typeof rlTensors>): Tensor => {
    const { logprobs } = rlLogprobs(cfg, p, b);
    for (const x of [b.advantages, b.samplingLogprobs, b.sequenceLengths, b.tokenWeights]) x.dispose();
    return logprobs.mul(b.mask).sum().neg();
  };
  const [value, grads] = jit(valueAndGrad(loss))(tree.ref(params), rlTensors(cfg, layout)) as unknown as [Tensor, Params];
  const fullLoss = (p: Params, b: ReturnType<typeof batchTensors>): Tensor => tokenLogprobs(cfg, p, b).logprobs.mul(b.mask).sum().neg();
  const [refValue, refGrads] = jit(valueAndGrad(fullLoss))(tree.ref(params), batchTensors(cfg, buildTokenBatch(list, {}))) as unknown as [Tensor, Params];
  assert.ok(Math.abs((await value.data())[0] - (await refValue.data())[0]) < 1e-4, 'loss value');
  const g = await toHostParams(grads);
  const r = await toHostParams(refGrads);
  for (const name of Object.keys(r)) {
    const scale = Math.max(1e-3, ...Array.from(r[name].data, Math.abs));
    assert.ok(maxAbsDiff(g[name].data, r[name].data) / scale < 1e-3, `gradient of ${name}`);
  }
  tree.dispose([params, grads, refGrads]);
}

test('shared-prefix logprobs and entropies equal the full-sequence forward', async () => {
  const [layout] = buildRlLayouts(samples, { rows: 4, lengthMultiple: 16, minLength: 16 });
  await assertLogprobsMatchFull(layout, samples, 3);
});

test('the frozen forward (jitted, merged heads materialised) equals the full-sequence forward', async () => {
  const params = toParams(randomHostParams(cfg, 5));
  const reference = await sequenceLogprobs(cfg, params, samples);
  const [layout] = buildRlLayouts(samples, { rows: 4, lengthMultiple: 16, minLength: 16 });
  const t = rlTensors(cfg, layout);
  const lp = sampleTargetValues(layout, samples, await logprobsOnLayout(frozenLogprobs(cfg), params, t).data());
  for (let i = 0; i < samples.length; i++) assert.ok(maxAbsDiff(lp.get(i)!, reference.logprobs[i]) < 1e-4, `logprobs of sample ${i}`);
  tree.dispose(t);
  tree.dispose(params);
});

test('gradients through the shared prefix equal those of the full forward', async () => {
  const [layout] = buildRlLayouts(samples, { rows: 2, lengthMultiple: 16, minLength: 16 });
  await assertGradientsMatchFull(layout, samples, 4);
});

/** Three answers to one long prompt (a dense decision's samples), one answer to another, one plain sample (ids below the vocabulary's 37). */
const longPrompt = [20, 21, 22, 23, 24, 25, 26, 27, 28, 29];
const branching = [
  sample(longPrompt, [4, 5, 6]),
  sample(longPrompt, [7, 8]),
  sample(longPrompt, [9, 10, 11, 12]),
  sample([30, 31, 32, 33, 34, 35, 36, 1, 2], [13]),
  sample([1, 2], [3, 14]),
];

test('samples with the same prompt share it in the row: one trunk segment, each answer sees it whole', () => {
  const [layout, ...rest] = buildRlLayouts(branching, { rows: 2, lengthMultiple: 16, minLength: 32 });
  assert.equal(rest.length, 0);
  const P = prefix.length;
  // The shared prompt (9 inputs past the prefix, before its last token) runs once; each answer then
  // takes its prompt's last token and its own tokens: 9 + (1 + 2) + (1 + 1) + (1 + 3).
  const shared = 9 + 3 + 2 + 4;
  const alone = (s: LayoutSample) => s.tokens.length - 1 - P;
  assert.equal(layout.computedTokens, P + shared + alone(branching[3]) + alone(branching[4]));
  const p = layout.placements.filter((q) => q.sample < 3);
  assert.deepEqual(p.map((q) => q.from), [P + 9, P + 9, P + 9], 'answers start at their prompt\'s last token');
  assert.deepEqual(p.map((q) => q.inputs), [3, 2, 4]);
  const at = (q: (typeof p)[number]) => q.row * layout.length + q.start;
  assert.equal(layout.inputIds[at(p[0])], 29);
  assert.equal(layout.positions[at(p[1])], P + 9, 'each answer continues the prompt\'s positions');
  assert.ok(p.every((q) => layout.trunkSegments[at(q)] === layout.segmentIds[at(p[0]) - 1]), 'and sees its trunk');
  // A prompt shorter than the sharing threshold past the prefix is not shared.
  const q3 = layout.placements.find((q) => q.sample === 3)!;
  assert.equal(q3.from, P);
  assert.equal(layout.trunkSegments[at(q3)], -1);
  // A trunk whose answers do not fit one row (16 positions: 9 + 3 + 2, then 4 more) repeats in the next.
  const narrow = buildRlLayouts([...branching.slice(0, 3), branching[4]], { rows: 2, lengthMultiple: 16, minLength: 16 });
  assert.deepEqual(narrow[0].placements.map((q) => [q.sample, q.row]), [[0, 0], [1, 0], [2, 1], [3, 1]]);
  assert.equal(narrow[0].computedTokens, P + (9 + 3 + 2) + (9 + 4) + alone(branching[4]));
});

test('shared prompts: logprobs, entropies and gradients equal the full-sequence forward', async () => {
  const [layout] = buildRlLayouts(branching, { rows: 2, lengthMultiple: 16, minLength: 32 });
  await assertLogprobsMatchFull(layout, branching, 5);
  await assertGradientsMatchFull(layout, branching, 5);
});

// One conversation: a first decision (two answers) and a later one whose prompt continues the first
// prompt and its played answer; plus an unrelated sample.
// (Ids below the tiny vocabulary's 37.)
const p1 = [20, 21, 22, 23, 24, 25, 26, 27, 28, 29];
const p2 = [...p1, 31, 32, 33, 34, 35];
const conversation = [sample(p1, [31, 32]), sample(p1, [36]), sample(p2, [1, 2]), sample(p2, [4]), sample([12, 13, 14], [15, 16])];

test('shareConversations: the decisions of one conversation share its text, each seeing it up to its own prompt', () => {
  const P = prefix.length;
  const inputs = (s: LayoutSample, from: number) => s.tokens.length - 1 - from;
  const e1 = P + p1.length - 1; // the first prompt's last token
  const e2 = P + p2.length - 1;
  const [exact] = buildRlLayouts(conversation, { rows: 2, lengthMultiple: 16, minLength: 48 });
  const [shared, ...rest] = buildRlLayouts(conversation, { rows: 2, lengthMultiple: 16, minLength: 48, shareConversations: true });
  assert.equal(rest.length, 0);
  // Without it: two trunks (p1 and p2); with it: one (p2), the first decision's answers inside it.
  const unrelated = inputs(conversation[4], P);
  assert.equal(exact.computedTokens, P + (e1 - P) + inputs(conversation[0], e1) + inputs(conversation[1], e1) + (e2 - P) + inputs(conversation[2], e2) + inputs(conversation[3], e2) + unrelated);
  assert.equal(shared.computedTokens, P + (e2 - P) + inputs(conversation[0], e1) + inputs(conversation[1], e1) + inputs(conversation[2], e2) + inputs(conversation[3], e2) + unrelated);
  const place = (i: number) => shared.placements.find((q) => q.sample === i)!;
  assert.deepEqual([0, 1, 2, 3].map((i) => place(i).from), [e1, e1, e2, e2]);
  const at = (i: number) => place(i).row * shared.length + place(i).start;
  const trunkRow = place(0).row;
  assert.ok([1, 2, 3].every((i) => place(i).row === trunkRow));
  const trunk = shared.trunkSegments[at(0)];
  assert.ok(trunk !== -1 && [1, 2, 3].every((i) => shared.trunkSegments[at(i)] === trunk));
  // The trunk starts the unit; the first decision sees its inputs [P, e1), the later one [P, e2).
  const trunkStart = shared.segmentIds.indexOf(trunk, trunkRow * shared.length) - trunkRow * shared.length;
  assert.equal(shared.trunkEnds[at(0)], trunkStart + (e1 - P));
  assert.equal(shared.trunkEnds[at(2)], trunkStart + (e2 - P));
  assert.equal(shared.trunkSegments[at(4)], -1, 'the unrelated sample has no trunk');
  assert.equal(shared.trunkEnds[at(4)], 0);
});

test('shareConversations: logprobs, entropies and gradients equal the full-sequence forward', async () => {
  const [layout] = buildRlLayouts(conversation, { rows: 2, lengthMultiple: 16, minLength: 48, shareConversations: true });
  await assertLogprobsMatchFull(layout, conversation, 7);
  await assertGradientsMatchFull(layout, conversation, 7);
});
