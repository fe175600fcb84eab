import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import { initEngine, np, type Tensor } from '../../src/model/engine.ts';
import { ParamTrainer } from '../../src/model/param-trainer.ts';
import { toHostParams, toParams, type Params } from '../../src/model/params.ts';
import { AdamW, learningRate, parseAdamWConfig, type AdamWConfig } from '../../src/model/adamw.ts';
import { maxAbsDiff } from './model-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

// loss = Σ (x·w + b − y)² with w [2, 2] (decayed) and b [2] (not decayed).
const X = [[1, 2], [-1, 0.5], [0.3, -2]];
const Y = [[1, 0], [0, 1], [2, -1]];
const W0 = [0.5, -0.2, 0.1, 0.3];
const B0 = [0.05, -0.1];

type Inputs = { x: Tensor; y: Tensor };
const inputs = (): Inputs => ({ x: np.array(X), y: np.array(Y) });
const loss = (p: Params, i: Inputs): Tensor => np.square(np.matmul(i.x, p.w).add(p.b).sub(i.y)).sum();

/** torch.optim.AdamW in float64, with clipping by global norm first. */
function referenceAdamW(cfg: AdamWConfig, steps: number): { w: number[]; b: number[]; losses: number[] } {
  const w = [...W0];
  const b = [...B0];
  const m = [new Array(4).fill(0), new Array(2).fill(0)];
  const v = [new Array(4).fill(0), new Array(2).fill(0)];
  const losses: number[] = [];
  for (let t = 1; t <= steps; t++) {
    const gw = new Array(4).fill(0);
    const gb = new Array(2).fill(0);
    let l = 0;
    X.forEach((x, n) => {
      for (let j = 0; j < 2; j++) {
        const r = x[0] * w[j] + x[1] * w[2 + j] + b[j] - Y[n][j];
        l += r * r;
        gw[j] += 2 * r * x[0];
        gw[2 + j] += 2 * r * x[1];
        gb[j] += 2 * r;
      }
    });
    losses.push(l);
    const norm = Math.sqrt([...gw, ...gb].reduce((a, g) => a + g * g, 0));
    const clip = cfg.maxGradNorm === null ? 1 : Math.min(1, cfg.maxGradNorm / (norm + 1e-6));
    const lr = learningRate(cfg, t);
    [[w, gw, 0], [b, gb, 1]].forEach(([p, g, k]) => {
      const params = p as number[];
      const grads = g as number[];
      const idx = k as number;
      for (let i = 0; i < params.length; i++) {
        const gi = grads[i] * clip;
        if (idx === 0) params[i] *= 1 - lr * cfg.weightDecay; // decoupled decay, matrices only
        m[idx][i] = cfg.beta1 * m[idx][i] + (1 - cfg.beta1) * gi;
        v[idx][i] = cfg.beta2 * v[idx][i] + (1 - cfg.beta2) * gi * gi;
        const mHat = m[idx][i] / (1 - Math.pow(cfg.beta1, t));
        const vHat = v[idx][i] / (1 - Math.pow(cfg.beta2, t));
        params[i] -= (lr * mHat) / (Math.sqrt(vHat) + cfg.eps);
      }
    });
  }
  return { w, b, losses };
}

const startParams = (): Params => ({ w: np.array(W0).reshape([2, 2]), b: np.array(B0) });

test('AdamW steps equal torch.optim.AdamW (bias correction, decoupled decay on matrices, clipping, warmup)', async () => {
  const options = { lr: 0.05, weightDecay: 0.1, maxGradNorm: 2, warmupSteps: 3, beta2: 0.99 };
  const cfg = parseAdamWConfig(options);
  const trainer = new ParamTrainer<Inputs>(startParams(), loss, options);
  const losses: number[] = [];
  for (let i = 0; i < 6; i++) losses.push((await trainer.step(inputs())).loss);
  const ref = referenceAdamW(cfg, 6);
  const got = await toHostParams(trainer.params);
  assert.ok(maxAbsDiff(got.w.data, ref.w) < 1e-5, `${got.w.data} vs ${ref.w}`);
  assert.ok(maxAbsDiff(got.b.data, ref.b) < 1e-5, `${got.b.data} vs ${ref.b}`);
  assert.ok(maxAbsDiff(losses, ref.losses) < 1e-4);
  trainer.dispose();
});

test('optimizer state survives a round trip as plain data: resumed training equals uninterrupted', async () => {
  const options = { lr: 0.05, weightDecay: 0.01 };
  const straight = new ParamTrainer<Inputs>(startParams(), loss, options);
  for (let i = 0; i < 4; i++) await straight.step(inputs());
  const first = new ParamTrainer<Inputs>(startParams(), loss, options);
  for (let i = 0; i < 2; i++) await first.step(inputs());
  const state = structuredClone(await first.optimizer.state()); // plain data: typed arrays and numbers
  const params = await toHostParams(first.params);
  first.dispose();
  const resumed = new ParamTrainer<Inputs>(toParams(params), loss, AdamW.fromState(state));
  assert.equal(resumed.optimizer.step, 2);
  for (let i = 0; i < 2; i++) await resumed.step(inputs());
  const a = await toHostParams(straight.params);
  const b = await toHostParams(resumed.params);
  assert.deepEqual(b.w.data, a.w.data);
  assert.deepEqual(b.b.data, a.b.data);
  straight.dispose();
  resumed.dispose();
});

test("a caller's schedule step sets the learning rate; bias correction still counts updates", async () => {
  // Warmup over 4 schedule steps: schedule step 2 is half the peak, whatever the update's number.
  const scheduled = new ParamTrainer<Inputs>(startParams(), loss, { lr: 0.1, warmupSteps: 4 });
  const constant = new ParamTrainer<Inputs>(startParams(), loss, { lr: 0.05 });
  for (let i = 0; i < 3; i++) {
    assert.equal((await scheduled.step(inputs(), 2)).learningRate, 0.05);
    await constant.step(inputs());
  }
  assert.equal(scheduled.optimizer.step, 3);
  const a = await toHostParams(scheduled.params);
  const b = await toHostParams(constant.params);
  assert.deepEqual(a.w.data, b.w.data);
  assert.deepEqual(a.b.data, b.b.data);
  scheduled.dispose();
  constant.dispose();
});

test('accumulated gradients make one update of their mean: three one-row batches equal one step on the mean loss', async () => {
  // Σ over rows of the row's loss, over 3 batches, = 3 × (the full batch's loss / 3): the same gradient mean.
  const options = { lr: 0.05, weightDecay: 0.1, maxGradNorm: 2, warmupSteps: 2 };
  const third = (p: Params, i: Inputs): Tensor => loss(p, i).div(3);
  const whole = new ParamTrainer<Inputs>(startParams(), third, options);
  const parts = new ParamTrainer<Inputs>(startParams(), loss, options);
  const row = (n: number): Inputs => ({ x: np.array([X[n]]), y: np.array([Y[n]]) });
  for (let update = 0; update < 3; update++) {
    const one = await whole.step(inputs());
    let sum = 0;
    for (let n = 0; n < 3; n++) sum += (await parts.accumulate(row(n))).loss;
    const applied = await parts.applyAccumulated();
    assert.equal(applied.batches, 3);
    assert.ok(Math.abs(sum / 3 - one.loss) < 1e-5, `loss ${sum / 3} vs ${one.loss}`);
    assert.ok(Math.abs(applied.gradNorm - one.gradNorm) < 1e-5, `norm ${applied.gradNorm} vs ${one.gradNorm}`);
    assert.equal(applied.learningRate, one.learningRate);
  }
  assert.ok((await parts.applyAccumulated().catch((e: Error) => e)) instanceof Error, 'nothing accumulated: refused');
  assert.equal(parts.optimizer.step, 3);
  const a = await toHostParams(whole.params);
  const b = await toHostParams(parts.params);
  assert.ok(maxAbsDiff(a.w.data, b.w.data) < 1e-6 && maxAbsDiff(a.b.data, b.b.data) < 1e-6, `${a.w.data} vs ${b.w.data}`);
  // The parameters moved (the test is not comparing two untouched copies).
  assert.ok(maxAbsDiff(b.w.data, W0) > 0.05);
  whole.dispose();
  parts.dispose();
});

test('a loss may return named metrics computed in the same pass', async () => {
  const withMetrics = (p: Params, i: Inputs): [Tensor, Record<string, Tensor>] => {
    const residual = np.matmul(i.x, p.w).add(p.b).sub(i.y);
    return [np.square(residual.ref).sum(), { meanResidual: residual.mean() }];
  };
  const trainer = new ParamTrainer<Inputs>(startParams(), withMetrics, { lr: 0.01 });
  const r = await trainer.step(inputs());
  // At the start: residuals of x·W0 + B0 − y, computed by hand.
  let sum = 0;
  X.forEach((x, n) => [0, 1].forEach((j) => (sum += x[0] * W0[j] + x[1] * W0[2 + j] + B0[j] - Y[n][j])));
  assert.ok(Math.abs(r.metrics.meanResidual - sum / 6) < 1e-6, `${r.metrics.meanResidual} vs ${sum / 6}`);
  assert.equal(r.learningRate, 0.01);
  trainer.dispose();
});

test('learning-rate schedule: linear warmup, then constant or cosine to the floor', () => {
  const warm = parseAdamWConfig({ lr: 1, warmupSteps: 4 });
  assert.deepEqual([1, 2, 4, 5, 100].map((t) => learningRate(warm, t)), [0.25, 0.5, 1, 1, 1]);
  const cos = parseAdamWConfig({ lr: 1, warmupSteps: 2, decay: 'cosine', totalSteps: 12, minLrRatio: 0.1 });
  assert.equal(learningRate(cos, 2), 1);
  assert.ok(Math.abs(learningRate(cos, 7) - 0.55) < 1e-12); // halfway: 0.1 + 0.9 / 2
  assert.ok(Math.abs(learningRate(cos, 12) - 0.1) < 1e-12);
  assert.ok(Math.abs(learningRate(cos, 50) - 0.1) < 1e-12);
});

test('bad optimizer settings are named', () => {
  assert.throws(() => parseAdamWConfig({ lr: -1 }), (e: unknown) => e instanceof UsageError && /optimizer.lr/.test(e.message));
  assert.throws(() => parseAdamWConfig({ lr: 1, beta1: 1 }), (e: unknown) => e instanceof UsageError && /optimizer.beta1/.test(e.message));
  assert.throws(() => parseAdamWConfig({ lr: 1, decay: 'cosine' }), (e: unknown) => e instanceof UsageError && /optimizer.totalSteps/.test(e.message));
});

test('each step and each accumulated gradient lets the event loop take a turn (a Ctrl-C handler runs between updates)', async () => {
  const trainer = new ParamTrainer<Inputs>(startParams(), loss, { lr: 1e-2 });
  for (const update of [() => trainer.step(inputs()), () => trainer.accumulate(inputs())]) {
    let turned = false;
    setImmediate(() => (turned = true));
    await update();
    assert.ok(turned, 'a macrotask queued before the update ran by the time it returned');
  }
  await trainer.applyAccumulated();
  trainer.dispose();
});
