import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinEnvs } from '../../src/envs/builtin.ts';
import { checkEnvSpec } from '../../src/envs/registry.ts';
import { meanCi } from '../../src/core/stats.ts';
import type { Action, EnvStep } from '../../src/envs/env.ts';
import { BanditEnv, armProbabilities } from '../../src/envs/bandit/env.ts';
import { BayesBandit, bayesOptimalReturn } from '../../src/envs/bandit/bayes.ts';
import { banditOptionsSchema } from '../../src/envs/bandit/options.ts';
import { banditSpec } from '../../src/envs/bandit/spec.ts';

const pull = (arm: number): Action => ({ name: 'pull', arguments: { arm } });

function playOut(env: BanditEnv, seed: number, choose: (t: number) => Action): { rewards: number[]; last: EnvStep } {
  env.reset(seed);
  const rewards: number[] = [];
  for (let t = 0; ; t++) {
    const step = env.step(choose(t));
    rewards.push(step.reward);
    if (step.done) return { rewards, last: step };
  }
}

test('observations count pulls and payouts per arm', () => {
  const env = new BanditEnv({ k: 3, horizon: 4 });
  const reset = env.reset(1);
  assert.equal(reset.observation, '4 pulls left. arm 1: never pulled; arm 2: never pulled; arm 3: never pulled.');
  assert.equal(reset.tools[0].name, 'pull');
  const first = env.step(pull(2));
  assert.match(first.observation, new RegExp(`^Arm 2 paid ${first.reward}\\. 3 pulls left\\. arm 1: never pulled; arm 2: ${first.reward} of 1 pulls paid; arm 3: never pulled\\.$`));
  assert.deepEqual(first.rewardParts, { payout: first.reward });
  const second = env.step(pull(2));
  assert.deepEqual(env.state(), { pullsLeft: 2, pulls: [0, 2, 0], successes: [0, first.reward + second.reward, 0] });
  env.step(pull(1));
  const last = env.step(pull(3));
  assert.equal(last.done, true);
  assert.match(last.observation, /No pulls left: you won \d in 4 pulls\.$/);
  assert.deepEqual(env.legalActions(), []);
  assert.equal(env.validate(pull(1)), 'no pulls left');
});

test('arm probabilities come from the seed, and so does the luck of every pull whatever arm is pulled', () => {
  const env = new BanditEnv({ k: 4, horizon: 30 });
  const seen = new Set<string>();
  for (let seed = 0; seed < 100; seed++) {
    const p = armProbabilities(seed, 4);
    assert.ok(p.every((x) => x >= 0 && x < 1));
    seen.add(p.join(','));
    const a = playOut(env, seed, () => pull(1));
    const b = playOut(env, seed, () => pull(2));
    const again = playOut(env, seed, () => pull(1));
    assert.deepEqual(again.rewards, a.rewards, `seed ${seed}`);
    assert.deepEqual(a.last.info!.armProbabilities, p);
    // One uniform draw per pull: the likelier arm pays whenever the other one does.
    const [hi, lo] = p[0] >= p[1] ? [a.rewards, b.rewards] : [b.rewards, a.rewards];
    hi.forEach((r, t) => assert.ok(r >= lo[t], `seed ${seed} pull ${t}`));
  }
  assert.equal(seen.size, 100);
});

test('payout rates match the arm probabilities', () => {
  const env = new BanditEnv({ k: 2, horizon: 50 });
  const errors: number[] = [];
  for (let seed = 0; seed < 400; seed++) {
    const { rewards, last } = playOut(env, seed, () => pull(1));
    const p = (last.info!.armProbabilities as number[])[0];
    for (const r of rewards) errors.push(r - p);
  }
  const { mean, std } = meanCi(errors);
  assert.ok(Math.abs(mean) < 4 * (std / Math.sqrt(errors.length)), `mean payout - p = ${mean}`);
});

test('the final step reports regret against always pulling the best arm', () => {
  const env = new BanditEnv({ k: 5, horizon: 12 });
  for (let seed = 0; seed < 50; seed++) {
    const p = armProbabilities(seed, 5);
    const best = p.indexOf(Math.max(...p));
    const byBest = playOut(env, seed, () => pull(best + 1));
    assert.equal(byBest.last.info!.regret, 0);
    assert.equal(byBest.last.info!.bestArm, best + 1);
    assert.ok(Math.abs((byBest.last.info!.oracleReturn as number) - 12 * p[best]) < 1e-12);
    const cycling = playOut(env, seed, (t) => pull((t % 5) + 1));
    const expected = 12 * p[best] - [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1].reduce((acc, arm) => acc + p[arm], 0);
    assert.ok(Math.abs((cycling.last.info!.regret as number) - expected) < 1e-12, `seed ${seed}`);
    assert.deepEqual(cycling.last.info!.metrics, { regret: cycling.last.info!.regret });
    assert.ok(expected > 0);
  }
});

test('actionRewards gives each arm its posterior mean (s + 1) / (n + 2), by hand', () => {
  const env = new BanditEnv({ k: 6, horizon: 3 });
  env.reset(4);
  const first = env.actionRewards();
  assert.deepEqual(first.map((v) => v.expectedReward), [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
  assert.deepEqual(first.map((v) => v.action), [1, 2, 3, 4, 5, 6].map(pull));
  assert.deepEqual(env.legalActions(), first.map((v) => v.action));
  const a = env.step(pull(2)).reward;
  const b = env.step(pull(2)).reward;
  // Arm 2 paid a + b of 2 pulls: (a + b + 1) / 4; the untried arms keep 1/2.
  assert.deepEqual(env.actionRewards().map((v) => v.expectedReward), [0.5, (a + b + 1) / 4, 0.5, 0.5, 0.5, 0.5]);
  assert.equal(env.kind, 'dense');
});

test('the posterior mean is the hidden probability\'s expectation given the pulls (uniform prior)', () => {
  // Pull arm 1 twice on many seeds; among the seeds that showed the same payouts, the arm's mean
  // hidden probability is what actionRewards said: 1/4, 1/2, 3/4 after 0, 1, 2 payouts.
  const env = new BanditEnv({ k: 2, horizon: 3 });
  const hidden: number[][] = [[], [], []];
  const said = [0.25, 0.5, 0.75];
  for (let seed = 0; seed < 30_000; seed++) {
    env.reset(seed);
    const paid = env.step(pull(1)).reward + env.step(pull(1)).reward;
    assert.equal(env.actionRewards()[0].expectedReward, said[paid]);
    hidden[paid].push(armProbabilities(seed, 2)[0]);
  }
  hidden.forEach((values, paid) => {
    const { mean, ci95 } = meanCi(values);
    assert.ok(ci95[0] - 0.005 <= said[paid] && said[paid] <= ci95[1] + 0.005, `${paid} payouts: hidden mean ${mean} [${ci95}], said ${said[paid]}`);
  });
});

test('the Bayes-optimal values by hand: one and two pulls of two arms', () => {
  // One pull: either arm pays with prior mean 1/2. Two pulls: pull arm 1 (1/2); after a payout its
  // posterior mean is 2/3 (pull it again), after none 1/3 < 1/2 (pull arm 2): 1/2 + 1/2·2/3 + 1/2·1/2.
  assert.equal(bayesOptimalReturn(2, 1), 0.5);
  assert.ok(Math.abs(bayesOptimalReturn(2, 2) - (0.5 + 1 / 3 + 1 / 4)) < 1e-12);
  const player = new BayesBandit(2, 3);
  // Arm 1 paid once and failed once (mean 1/2), arm 2 untried (1/2), one pull left: a tie, first arm.
  assert.deepEqual(player.pullValues([[1, 1], [0, 0]]), [0.5, 0.5]);
  assert.equal(player.bestArm([[1, 1], [0, 0]]), 0);
  // Arm 1 failed once: arm 2 (mean 1/2) beats arm 1 (1/3).
  assert.equal(player.bestArm([[0, 1], [0, 0]]), 1);
  assert.throws(() => bayesOptimalReturn(10, 200), /more than 2,000,000 states for k 10 and 200 pulls/);
});

test('the oracle plays Bayes-optimally: its mean payout over seeds is optimalReturn, below the best arm\'s', () => {
  const options = banditOptionsSchema.parse({ k: 3, horizon: 10 });
  const optimal = banditSpec.exact!.optimalReturn!(options);
  assert.ok(Math.abs(optimal - 6.4096) < 1e-4, `optimal ${optimal}`);
  assert.ok(optimal < (10 * 3) / 4);
  const env = new BanditEnv(options);
  const returns = Array.from({ length: 4000 }, (_, seed) => playOut(env, seed, () => env.oracle().action).rewards.reduce((a, b) => a + b, 0));
  const { mean, std } = meanCi(returns);
  assert.ok(Math.abs(mean - optimal) < 4 * (std / Math.sqrt(returns.length)), `MC ${mean} vs ${optimal}`);
  // The oracle reads only the pulls it saw: two seeds with the same payouts so far get the same advice.
  env.reset(0);
  assert.deepEqual(env.oracle().action, pull(1));
});

test('validate explains every illegal pull; invalid pulls get retries then -1', () => {
  const env = new BanditEnv({ k: 3, horizon: 5 });
  assert.throws(() => env.oracle(), /reset/);
  env.reset(0);
  assert.equal(env.validate(pull(3)), null);
  assert.equal(env.validate(pull(0)), 'arm must be an integer 1..3, got 0');
  assert.equal(env.validate(pull(4)), 'arm must be an integer 1..3, got 4');
  assert.equal(env.validate({ name: 'pull', arguments: { arm: '2' } }), 'arm must be an integer 1..3, got "2"');
  assert.equal(env.validate({ name: 'pull', arguments: {} }), 'arm must be an integer 1..3, got undefined');
  assert.match(env.validate({ name: 'pull', arguments: { arm: 1, times: 2 } })!, /only the arm argument \(got times\)/);
  assert.match(env.validate({ name: 'spin', arguments: {} })!, /unknown action 'spin'/);
  assert.throws(() => env.step(pull(9)), /arm must be/);
  assert.deepEqual(env.invalidAction, { mode: 'retry', penalty: -1, maxRetries: 2 });
});

test('options are strict and bounded; instructions state arms and pulls', () => {
  assert.deepEqual(banditOptionsSchema.parse({}), { k: 3, horizon: 10 });
  for (const bad of [{ k: 1 }, { k: 11 }, { horizon: 0 }, { horizon: 2.5 }, { arms: 3 }]) {
    assert.equal(banditOptionsSchema.safeParse(bad).success, false, JSON.stringify(bad));
  }
  assert.match(banditSpec.instructions({ k: 4, horizon: 20 }), /4 slot machines.*20 pulls/s);
  assert.equal(new BanditEnv({ k: 2, horizon: 7 }).maxTurns, 7);
});

test('registered as a built-in env that satisfies the contract', () => {
  assert.ok(builtinEnvs.includes(banditSpec));
  checkEnvSpec(banditSpec, 'bandit');
});
