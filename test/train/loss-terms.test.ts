/** The per-token terms and estimators against numbers worked out by hand (ε_low 0.2, ε_high 0.28). */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { grad, initEngine, np, type Tensor } from '../../src/model/engine.ts';
import { truncatedImportanceWeight } from '../../src/train/loss-importance.ts';
import { k3, k3Inverse, klToReference } from '../../src/train/loss-kl.ts';
import { cispoTerm, ppoClipTerm } from '../../src/train/loss-policy.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const RANGE = { clipLow: 0.2, clipHigh: 0.28 };
const ratios = [1.5, 0.5, 1.5, 0.5];
const advantages = [2, -1, -1, 2];
const logRatio = (): Tensor => np.array([ratios.map(Math.log)]);

function close(actual: ArrayLike<number>, expected: number[], tol = 1e-5, what = ''): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(Math.abs(actual[i] - expected[i]) <= tol, `${what}[${i}]: ${actual[i]} vs ${expected[i]}`);
  }
}

test('ppo clip: −min(r·A, clip(r)·A) per token, and which bound took effect', async () => {
  const term = ppoClipTerm(logRatio(), np.array([advantages]), RANGE);
  // r=1.5 A=2:  −min(3, 1.28·2) = −2.56   (clipped high)
  // r=0.5 A=−1: −min(−0.5, 0.8·−1) = 0.8  (clipped low)
  // r=1.5 A=−1: −min(−1.5, −1.28) = 1.5   (pessimistic side: not clipped)
  // r=0.5 A=2:  −min(1, 1.6) = −1         (not clipped)
  close(await term.loss.data(), [-2.56, 0.8, 1.5, -1], 1e-5, 'loss');
  close(await term.ratio.data(), ratios, 1e-6, 'ratio');
  close(await term.clippedLow.data(), [0, 1, 0, 0], 0, 'clippedLow');
  close(await term.clippedHigh.data(), [1, 0, 0, 0], 0, 'clippedHigh');
});

test('ppo clip: the gradient is 0 on clipped tokens and −r·A elsewhere', async () => {
  const g = grad((x: Tensor) => ppoClipTerm(x, np.array([advantages]), RANGE).loss.sum())(logRatio());
  // d(−r·A)/dx = −r·A with r = exp(x): tokens 3 and 4 give −1.5·−1 = 1.5 and −0.5·2 = −1.
  close(await g.data(), [0, 0, 1.5, -1], 1e-5, 'd loss / d log r');
});

test('cispo: −sg(clip(r))·A·log π, with a gradient on every token, clipped ones included', async () => {
  const newLp = [-0.5, -1, -2, -0.1];
  const term = cispoTerm(np.array([newLp]), logRatio(), np.array([advantages]), RANGE);
  // weights clip(r, 0.8, 1.28) = [1.28, 0.8, 1.28, 0.8]; loss = −w·A·logπ
  close(await term.loss.data(), [1.28, -0.8, -2.56, 0.16], 1e-5, 'loss');
  close(await term.clippedLow.data(), [0, 1, 0, 1], 0, 'clippedLow');
  close(await term.clippedHigh.data(), [1, 0, 1, 0], 0, 'clippedHigh');

  // The ratio is built from the same log π inside the function: the stop-gradient must leave
  // d loss / d log π = −w·A, not the derivative through w.
  const sampling = newLp.map((lp, i) => lp - Math.log(ratios[i]));
  const g = grad((lp: Tensor) => {
    const x = lp.ref.sub(np.array([sampling]));
    return cispoTerm(lp, x, np.array([advantages]), RANGE).loss.sum();
  })(np.array([newLp]));
  close(await g.data(), [-2.56, 0.8, 1.28, -1.6], 1e-5, 'd loss / d log π');
});

test('k3: exp(x) − x − 1, zero at x = 0', async () => {
  const x = [0, Math.LN2, -Math.LN2, 1];
  // 2 − ln2 − 1 = 0.306853, 0.5 + ln2 − 1 = 0.193147, e − 2 = 0.718282
  close(await k3(np.array(x)).data(), [0, 0.306853, 0.193147, 0.718282], 1e-6, 'k3');
});

test('k3 KL to the reference: 0 where ref = new, gradient 1 − π_ref/π_new, masked padding stays finite', async () => {
  const ref = [-1, -1 + Math.LN2, -1 - Math.LN2, 150];
  const fresh = [-1, -1, -1, -80];
  const mask = [1, 1, 1, 0];
  const kl = klToReference(np.array(ref), np.array(fresh), np.array(mask));
  // ref − new = [0, ln2, −ln2, masked]
  close(await kl.data(), [0, 0.306853, 0.193147, 0], 1e-6, 'kl');
  const g = grad((lp: Tensor) => klToReference(np.array(ref), lp, np.array(mask)).sum())(np.array(fresh));
  // d/d new of exp(ref − new) − (ref − new) − 1 = 1 − exp(ref − new) = [0, 1 − 2, 1 − 0.5, 0]
  close(await g.data(), [0, -1, 0.5, 0], 1e-6, 'gradient');
});

test('k3 KL past klMax continues along its tangent: the value grows linearly and the gradient stays bounded, never 0', async () => {
  // ref − new = [0, ln 2, ln 100, −ln 100]: k3 = [0, 0.306853, 100 − ln 100 − 1 = 94.39483, 0.01 + ln 100 − 1 = 3.61517]
  const ref = [-1, -1 + Math.LN2, -1 + Math.log(100), -1 - Math.log(100)];
  const fresh = [-1, -1, -1, -1];
  const mask = [1, 1, 1, 1];
  close(await klToReference(np.array(ref), np.array(fresh), np.array(mask)).data(), [0, 0.306853, 94.39483, 3.61517], 1e-4, 'unclamped');
  // klMax 10: x* = 2.6108686 (e^x* − x* − 1 = 10); past it 10 + (e^x* − 1)(ln 100 − x*) = 35.149875
  assert.ok(Math.abs(k3Inverse(10) - 2.610868638) < 1e-8, `x* ${k3Inverse(10)}`);
  close(await klToReference(np.array(ref), np.array(fresh), np.array(mask), 10).data(), [0, 0.306853, 35.149875, 3.61517], 1e-4, 'bounded');
  const g = grad((lp: Tensor) => klToReference(np.array(ref), lp, np.array(mask), 10).sum())(np.array(fresh));
  // 1 − π_ref/π_new = [0, −1, (bounded: 1 − e^x* = −12.610869, not −99), 1 − 0.01]
  close(await g.data(), [0, -1, -12.610869, 0.99], 1e-4, 'gradient');
  // Continuous at x*: just below and above it agree with k3 (value and slope).
  const at = k3Inverse(10);
  const near = [-1 + at - 1e-3, -1 + at + 1e-3];
  close(await klToReference(np.array(near), np.array([-1, -1]), np.array([1, 1]), 10).data(), [Math.exp(at - 1e-3) - (at - 1e-3) - 1, 10 + (Math.exp(at) - 1) * 1e-3], 1e-4, 'continuous');
  assert.throws(() => k3Inverse(0), /max must be > 0/);
});

test('k2 KL to the reference: ½(ref − new)², gradient new − ref; past klMax the Huber tangent, slope ±√(2·klMax)', async () => {
  // ref − new = [0, ln 2, 3, −3], padding masked
  const ref = [-1, -1 + Math.LN2, 2, -4, 150];
  const fresh = [-1, -1, -1, -1, -80];
  const mask = [1, 1, 1, 1, 0];
  const half = 0.5 * Math.LN2 ** 2; // 0.240227
  close(await klToReference(np.array(ref), np.array(fresh), np.array(mask), null, 'k2').data(), [0, half, 4.5, 4.5, 0], 1e-6, 'k2');
  const g = grad((lp: Tensor) => klToReference(np.array(ref), lp, np.array(mask), null, 'k2').sum())(np.array(fresh));
  close(await g.data(), [0, -Math.LN2, -3, 3, 0], 1e-6, 'gradient');
  // klMax 2: edge √4 = 2; past it ½·4 + 2(|x| − 2) = 4 at |x| = 3, slope ∓2.
  close(await klToReference(np.array(ref), np.array(fresh), np.array(mask), 2, 'k2').data(), [0, half, 4, 4, 0], 1e-6, 'bounded');
  const gb = grad((lp: Tensor) => klToReference(np.array(ref), lp, np.array(mask), 2, 'k2').sum())(np.array(fresh));
  close(await gb.data(), [0, -Math.LN2, -2, 2, 0], 1e-6, 'bounded gradient');
});

test('over the actions a policy samples, k3 as a loss follows the forward KL(π_ref ‖ π) and k2 the reverse KL(π ‖ π_ref)', async () => {
  // π = softmax(z) over 3 actions, π_ref fixed. E_{a~π}[∇_z loss(a)] = Σ_a π_a ∇_z loss(a), each
  // loss taken with the gradient through log π_a only (as the trainer does with sampled tokens).
  const z = [0.3, -0.2, 1.1];
  const refLp = [Math.log(0.5), Math.log(0.3), Math.log(0.2)];
  const p = z.map(Math.exp);
  const total = p.reduce((a, b) => a + b, 0);
  const pi = p.map((v) => v / total);
  const logPi = pi.map(Math.log);
  const expected = async (estimator: 'k3' | 'k2'): Promise<number[]> => {
    const g = grad((zz: Tensor) => {
      const lp = zz.ref.sub(np.log(np.exp(zz).sum()));
      // Σ_a π_a·term(a) with π_a held constant: the expectation over sampled actions.
      return klToReference(np.array(refLp), lp, np.array([1, 1, 1]), null, estimator).mul(np.array(pi)).sum();
    })(np.array(z));
    return Array.from(await g.data());
  };
  // ∇_z KL(π_ref ‖ π) = π − π_ref;  ∇_z KL(π ‖ π_ref) = π ⊙ (d − Σ π d) with d = log π − log π_ref.
  const refP = refLp.map(Math.exp);
  const d = logPi.map((v, i) => v - refLp[i]);
  const meanD = d.reduce((a, v, i) => a + pi[i] * v, 0);
  close(await expected('k3'), pi.map((v, i) => v - refP[i]), 1e-6, 'k3: forward KL gradient');
  close(await expected('k2'), pi.map((v, i) => v * (d[i] - meanD)), 1e-6, 'k2: reverse KL gradient');
});

test('truncated importance weight: min(π_old/π_sampler, cap) and the capped share', async () => {
  // old − sampling = [0, ln 3, −ln 2, ln 1.5] → π_old/π_sampler = [1, 3, 0.5, 1.5]; cap 2
  const w = truncatedImportanceWeight(np.array([0, Math.log(3), -Math.LN2, Math.log(1.5)]), 2);
  close(await w.weight.data(), [1, 2, 0.5, 1.5], 1e-6, 'weight');
  close(await w.capped.data(), [0, 1, 0, 0], 0, 'capped');
});
