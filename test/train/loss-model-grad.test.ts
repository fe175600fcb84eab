/**
 * The losses on a real (tiny) transformer: gradients w.r.t. every parameter tensor against central
 * finite differences, with clipping active for positive and for negative advantages, CISPO's
 * gradient, the k3 KL's, and the entropy bonus's.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { Rng } from '../../src/core/random.ts';
import { parseModelConfig, type ModelConfig } from '../../src/model/config.ts';
import { initEngine, np, valueAndGrad, type Tensor } from '../../src/model/engine.ts';
import { batchTensors, tokenLogprobs } from '../../src/model/logprobs.ts';
import { paramShapes, toHostParams, toParams, type HostParams, type Params } from '../../src/model/params.ts';
import { buildTokenBatch } from '../../src/model/token-batch.ts';
import { parseLossConfig, type LossConfig } from '../../src/train/loss-config.ts';
import { policyLoss } from '../../src/train/loss-rl.ts';

const cfg: ModelConfig = parseModelConfig({
  model_type: 'qwen3',
  vocab_size: 23,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 8,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
});

/** Strong random weights (init-scale ones give near-uniform logits and tiny gradients). */
function randomHost(seed: number): HostParams {
  const rng = new Rng(seed);
  const out: HostParams = {};
  for (const [name, shape] of Object.entries(paramShapes(cfg))) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const norm = name.endsWith('norm.weight');
    for (let i = 0; i < data.length; i++) data[i] = norm ? 1 + 0.2 * rng.normal() : 0.4 * rng.normal();
    out[name] = { shape, data };
  }
  return out;
}

const batch = buildTokenBatch([
  { promptIds: [1, 5, 9], completionIds: [3, 3, 7, 2] },
  { promptIds: [4, 4], completionIds: [8, 11] },
]);
const shape = [batch.batch, batch.length];
const trained: number[] = []; // flat positions of the 6 completion tokens, in order
batch.mask.forEach((m, i) => {
  if (m === 1) trained.push(i);
});

/** Per trained token: the ratio π_θ0/π_sampler to build, and its advantage (ε_low 0.2, ε_high 0.28). */
const TOKENS = [
  { ratio: 1.5, advantage: 1, clipped: true }, // above 1 + ε_high with A > 0: clipped high
  { ratio: 0.5, advantage: -1, clipped: true }, // below 1 − ε_low with A < 0: clipped low
  { ratio: 1.0, advantage: 1, clipped: false },
  { ratio: 1.1, advantage: -0.5, clipped: false },
  { ratio: 1.5, advantage: -1, clipped: false }, // outside the range, but on the pessimistic side
  { ratio: 0.5, advantage: 1, clipped: false },
];

let host: HostParams;
let lp0: Float32Array; // log π_θ0 at every position

before(async () => {
  await initEngine({ threads: 1 });
  host = randomHost(5);
  const { mask, ...inputs } = batchTensors(cfg, batch);
  mask.dispose();
  lp0 = Float32Array.from(await tokenLogprobs(cfg, toParams(host), inputs).logprobs.data());
  assert.equal(trained.length, TOKENS.length);
});

type Setup = { sampling: Float32Array; advantages: Float32Array; mask: Float32Array; ref?: Float32Array };

/** Sampling logprobs placed so that at θ0 the ratio of token k is TOKENS[k].ratio. */
function setup(only?: number): Setup {
  const size = batch.batch * batch.length;
  const s: Setup = { sampling: new Float32Array(size), advantages: new Float32Array(size), mask: new Float32Array(size) };
  trained.forEach((pos, k) => {
    s.sampling[pos] = lp0[pos] - Math.log(TOKENS[k].ratio);
    s.advantages[pos] = TOKENS[k].advantage;
    s.mask[pos] = only === undefined || only === k ? 1 : 0;
  });
  return s;
}

function lossFn(s: Setup, config: LossConfig): (params: Params) => Tensor {
  const settings = parseLossConfig(config);
  return (params) => {
    const { mask, ...inputs } = batchTensors(cfg, batch);
    mask.dispose();
    const { logprobs, entropy } = tokenLogprobs(cfg, params, inputs, { entropy: settings.entropyCoef > 0 });
    const arr = (data: Float32Array) => np.array(data).reshape(shape);
    const [loss, metrics] = policyLoss(
      {
        newLogprobs: logprobs,
        entropy,
        samplingLogprobs: arr(s.sampling),
        advantages: arr(s.advantages),
        mask: arr(s.mask),
        refLogprobs: s.ref ? arr(s.ref) : undefined,
      },
      settings,
    );
    for (const m of Object.values(metrics)) m.dispose();
    return loss;
  };
}

async function valueAndGrads(f: (p: Params) => Tensor, h: HostParams): Promise<{ value: number; grads: HostParams }> {
  const [value, grads] = valueAndGrad(f)(toParams(h));
  return { value: (await value.data())[0], grads: await toHostParams(grads as Params) };
}

async function valueAt(f: (p: Params) => Tensor, h: HostParams): Promise<number> {
  return (await f(toParams(h)).data())[0];
}

/**
 * Per tensor, the autodiff derivative along a random unit direction u against
 * (f(θ + εu) − f(θ − εu)) / 2ε in float32. ε = 1e-2 keeps every ratio on its side of the clip bounds.
 */
async function checkFiniteDifferences(f: (p: Params) => Tensor, label: string): Promise<void> {
  const { grads } = await valueAndGrads(f, host);
  const rng = new Rng(17);
  const eps = 1e-2;
  for (const [name, t] of Object.entries(host)) {
    const u = Float32Array.from(t.data, () => rng.normal());
    const norm = Math.hypot(...u);
    for (let i = 0; i < u.length; i++) u[i] /= norm;
    const shifted = (sign: number): HostParams => ({
      ...host,
      [name]: { shape: t.shape, data: Float32Array.from(t.data, (x, i) => x + sign * eps * u[i]) },
    });
    let directional = 0;
    for (let i = 0; i < u.length; i++) directional += grads[name].data[i] * u[i];
    const fd = ((await valueAt(f, shifted(1))) - (await valueAt(f, shifted(-1)))) / (2 * eps);
    assert.ok(
      Math.abs(directional - fd) <= 1e-3 * Math.abs(fd) + 3e-5,
      `${label} ${name}: autodiff ${directional} vs finite difference ${fd}`,
    );
  }
}

function gradNorm(grads: HostParams): number {
  let s = 0;
  for (const t of Object.values(grads)) for (const g of t.data) s += g * g;
  return Math.sqrt(s);
}

test('clipped PG: gradient matches finite differences on every tensor (grpo and dapo)', async () => {
  await checkFiniteDifferences(lossFn(setup(), { lengthNorm: 'grpo' }), 'grpo');
  await checkFiniteDifferences(lossFn(setup(), { lengthNorm: 'dapo' }), 'dapo');
});

test('clipped PG: a token clipped high (A > 0) or low (A < 0) has zero gradient; the others do not', async () => {
  for (let k = 0; k < TOKENS.length; k++) {
    const f = lossFn(setup(k), {});
    const { value, grads } = await valueAndGrads(f, host);
    const norm = gradNorm(grads);
    if (TOKENS[k].clipped) {
      assert.equal(norm, 0, `token ${k} (r ${TOKENS[k].ratio}, A ${TOKENS[k].advantage}) is clipped: gradient norm ${norm}`);
      // The loss is flat there: it is the constant −clip(r)·A.
      const bound = TOKENS[k].advantage > 0 ? 1.28 : 0.8;
      assert.ok(Math.abs(value + bound * TOKENS[k].advantage) < 1e-5, `token ${k}: loss ${value}`);
    } else {
      assert.ok(norm > 1e-3, `token ${k} (r ${TOKENS[k].ratio}, A ${TOKENS[k].advantage}) is not clipped: gradient norm ${norm}`);
    }
  }
  // Both clipped tokens together: the loss is locally flat, and finite differences agree.
  const clippedOnly = setup(0);
  clippedOnly.mask[trained[1]] = 1;
  await checkFiniteDifferences(lossFn(clippedOnly, {}), 'clipped tokens');
});

test('CISPO: gradient is −Σ w·sg(clip(r))·A·∇log π, clipped tokens included', async () => {
  const s = setup();
  const { grads } = await valueAndGrads(lossFn(s, { policyLoss: 'cispo' }), host);
  // The same gradient from the plain surrogate Σ c_t·log π_t with c_t = −clip(r_t)·A_t / 6 (dapo over 6 tokens).
  const c = new Float32Array(s.mask.length);
  trained.forEach((pos, k) => {
    const w = Math.min(Math.max(TOKENS[k].ratio, 0.8), 1.28);
    c[pos] = (-w * TOKENS[k].advantage) / TOKENS.length;
  });
  const surrogate = (params: Params): Tensor => {
    const { mask, ...inputs } = batchTensors(cfg, batch);
    mask.dispose();
    return tokenLogprobs(cfg, params, inputs).logprobs.mul(np.array(c).reshape(shape)).sum();
  };
  const expected = (await valueAndGrads(surrogate, host)).grads;
  for (const name of Object.keys(host)) {
    const a = grads[name].data;
    const b = expected[name].data;
    for (let i = 0; i < a.length; i++) {
      assert.ok(Math.abs(a[i] - b[i]) <= 1e-5 + 1e-4 * Math.abs(b[i]), `${name}[${i}]: ${a[i]} vs ${b[i]}`);
    }
  }
  for (const k of [0, 1]) {
    const norm = gradNorm((await valueAndGrads(lossFn(setup(k), { policyLoss: 'cispo' }), host)).grads);
    assert.ok(norm > 1e-3, `CISPO keeps the gradient of token ${k}, which PPO clips: norm ${norm}`);
  }
});

test('k3 KL: 0 with zero gradient when ref = new; gradient matches finite differences otherwise', async () => {
  const s = setup();
  s.advantages.fill(0); // the KL term alone
  s.ref = Float32Array.from(lp0);
  const same = await valueAndGrads(lossFn(s, { klBeta: 1 }), host);
  assert.ok(Math.abs(same.value) < 1e-6, `KL at ref = new: ${same.value}`);
  assert.ok(gradNorm(same.grads) < 1e-5, `gradient at ref = new: ${gradNorm(same.grads)}`);

  const rng = new Rng(3);
  s.ref = Float32Array.from(lp0, (x) => x + 0.5 * rng.normal());
  const f = lossFn(s, { klBeta: 0.5, lengthNorm: 'grpo' });
  assert.ok((await valueAt(f, host)) > 1e-3);
  await checkFiniteDifferences(f, 'k3 KL');
});

test('entropy bonus: gradient matches finite differences; a step down its gradient raises the entropy', async () => {
  const s = setup();
  s.advantages.fill(0); // the bonus alone
  const f = lossFn(s, { entropyCoef: 0.5 });
  await checkFiniteDifferences(f, 'entropy bonus');
  const meanEntropy = async (h: HostParams): Promise<number> => -(await valueAt(f, h)) / 0.5;
  const { grads } = await valueAndGrads(f, host);
  const stepped: HostParams = {};
  for (const [name, t] of Object.entries(host)) stepped[name] = { shape: t.shape, data: Float32Array.from(t.data, (x, i) => x - 0.05 * grads[name].data[i]) };
  const before = await meanEntropy(host);
  const after = await meanEntropy(stepped);
  assert.ok(before > 0.1 && after > before + 1e-3, `mean entropy ${before} → ${after}`);
});
