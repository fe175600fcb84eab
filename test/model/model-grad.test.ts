import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { Rng } from '../../src/core/random.ts';
import type { ModelConfig } from '../../src/model/config.ts';
import { initEngine, valueAndGrad, type Tensor } from '../../src/model/engine.ts';
import { batchTensors, tokenLogprobs, type BatchTensors } from '../../src/model/logprobs.ts';
import { toHostParams, toParams, type HostParams, type Params } from '../../src/model/params.ts';
import { buildTokenBatch } from '../../src/model/token-batch.ts';
import { randomHostParams, tinyConfig } from './model-fixtures.ts';
import { referenceLogits } from './model-reference.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const samples = [
  { promptIds: [1, 5, 9], completionIds: [3, 3, 7, 2] },
  { promptIds: [4, 4], completionIds: [8, 11] },
];
const ENTROPY_WEIGHT = 0.1;

/** Σ over completion tokens of logp + 0.1·entropy, from the float64 reference forward. */
function referenceObjective(cfg: ModelConfig, host: HostParams): number {
  let total = 0;
  for (const s of samples) {
    const seq = [...s.promptIds, ...s.completionIds];
    const logits = referenceLogits(cfg, host, seq.slice(0, -1));
    s.completionIds.forEach((tok, j) => {
      const row = logits[s.promptIds.length - 1 + j];
      const m = Math.max(...row);
      const lse = m + Math.log(row.reduce((a, v) => a + Math.exp(v - m), 0));
      const entropy = -row.reduce((a, v) => a + Math.exp(v - lse) * (v - lse), 0);
      total += row[tok] - lse + ENTROPY_WEIGHT * entropy;
    });
  }
  return total;
}

function objective(cfg: ModelConfig, params: Params, b: BatchTensors): Tensor {
  const { mask, ...inputs } = b;
  const { logprobs, entropy } = tokenLogprobs(cfg, params, inputs, { entropy: true });
  return logprobs.add(entropy!.mul(ENTROPY_WEIGHT)).mul(mask).sum();
}

for (const [modelType, extra] of [['qwen3', {}], ['qwen2', {}], ['llama', {}], ['llama', { vocab_size: 1100 }]] as const) {
  test(`gradients of the training forward match float64 finite differences, every tensor (${modelType} ${JSON.stringify(extra)})`, async () => {
    const cfg = tinyConfig(modelType, extra);
    const host = randomHostParams(cfg, 3);
    const batch = batchTensors(cfg, buildTokenBatch(samples));
    const [value, grads] = valueAndGrad((p: Params, b: BatchTensors) => objective(cfg, p, b))(toParams(host), batch);
    const g = await toHostParams(grads as Params);
    const f0 = referenceObjective(cfg, host);
    assert.ok(Math.abs((await value.data())[0] - f0) < 1e-4 * Math.max(1, Math.abs(f0)));

    // Per tensor: the derivative along a random direction u inside that tensor, <g, u>, against central
    // differences (f(θ+εu) − f(θ−εu)) at ε and 2ε combined to cancel their ε³ term (Richardson).
    const rng = new Rng(11);
    const eps = 1e-4;
    for (const [name, t] of Object.entries(host)) {
      const u = Float32Array.from(t.data, () => rng.normal());
      const shifted = (step: number): HostParams => ({
        ...host,
        [name]: { shape: t.shape, data: Float32Array.from(t.data, (x, i) => x + step * u[i]) },
      });
      const at = (step: number) => {
        const [up, down] = [shifted(step), shifted(-step)];
        // The shift is rounded to float32; use the exact applied step per element.
        const plus = up[name].data;
        const minus = down[name].data;
        let directional = 0;
        let magnitude = 0;
        for (let i = 0; i < u.length; i++) {
          directional += g[name].data[i] * (plus[i] - minus[i]);
          magnitude += Math.abs(g[name].data[i] * (plus[i] - minus[i]));
        }
        return { directional, magnitude, fd: referenceObjective(cfg, up) - referenceObjective(cfg, down) };
      };
      const [one, two] = [at(eps), at(2 * eps)];
      // fd(ε) = 2ε·D + ε³·T/3 + O(ε⁵), so (8·fd(ε) − fd(2ε)) / 6 = 2ε·D + O(ε⁵); the same combination of
      // the autodiff side keeps the float32-rounded steps matched term by term.
      const directional = (8 * one.directional - two.directional) / 6;
      const fd = (8 * one.fd - two.fd) / 6;
      assert.ok(Math.abs(fd) > 1e-7, `${name}: the objective should depend on it`);
      // Beside 1e-3 of the derivative, float32's rounding of each gradient element (~1e-6 of it) summed
      // over Σ|gᵢΔᵢ|: along the embedding of vocabulary 1,100 the rows' terms cancel to 1/1,700 of that
      // sum, and the rounding alone came to 0.7 of 1e-3 of the derivative.
      const tolerance = 1e-3 * Math.abs(fd) + 2e-6 * one.magnitude + 1e-9;
      assert.ok(Math.abs(directional - fd) <= tolerance, `${name}: autodiff ${directional} vs finite difference ${fd} (Σ|gΔ| ${one.magnitude})`);
    }
  });
}
