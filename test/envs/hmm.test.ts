import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Rng } from '../../src/core/random.ts';
import { HmmEnv, samplePath } from '../../src/envs/hmm/env.ts';
import { forwardPosteriors, update } from '../../src/envs/hmm/forward.ts';
import { drawModel, type HmmModel } from '../../src/envs/hmm/model.ts';
import { hmmOptionsSchema, type HmmOptions } from '../../src/envs/hmm/options.ts';
import type { EnvStep } from '../../src/envs/env.ts';

const opts = (raw: Record<string, unknown> = {}): HmmOptions => hmmOptionsSchema.parse(raw);
const guess = (state: string) => ({ name: 'guess_state', arguments: { state } });
const model = (states: number, symbols: number, seed: number): HmmModel =>
  drawModel({ states, symbols, stay: [55, 90], clarity: [40, 80] }, new Rng(seed));

/** p(z_t = k | o_1..t) by summing the joint probability of every hidden path of length t. */
function bruteForcePosterior(m: HmmModel, signals: number[]): number[] {
  const k = m.states.length;
  const t = signals.length;
  const out = new Array<number>(k).fill(0);
  const path = new Array<number>(t).fill(0);
  for (let code = 0; code < k ** t; code++) {
    let c = code;
    for (let i = 0; i < t; i++) {
      path[i] = c % k;
      c = Math.floor(c / k);
    }
    let p = m.initial[path[0]] * m.emission[path[0]][signals[0]];
    for (let i = 1; i < t; i++) p *= m.transition[path[i - 1]][path[i]] * m.emission[path[i]][signals[i]];
    out[path[t - 1]] += p;
  }
  const total = out.reduce((a, b) => a + b, 0);
  return out.map((x) => x / total);
}

describe('hmm model', () => {
  it('draws stochastic matrices with sticky states and distinct own signals', () => {
    for (let seed = 0; seed < 50; seed++) {
      const m = model(3, 3, seed);
      for (const r of [...m.transition, ...m.emission]) assert.ok(Math.abs(r.reduce((a, b) => a + b, 0) - 1) < 1e-12);
      m.transition.forEach((r, i) => assert.ok(r[i] >= 0.55 && r[i] <= 0.9));
      const own = m.emission.map((r) => r.findIndex((p) => p >= 0.4 && p <= 0.8));
      assert.ok(own.every((s) => s >= 0));
    }
  });

  it("pairs states with their own signals per episode, or A with x, B with y under ownSignals 'fixed'", () => {
    const ownOfA = (o: HmmOptions, seed: number) => {
      const env = new HmmEnv(o);
      env.reset(seed);
      const emission = env.state().emission as number[][];
      return emission.map((row) => row.indexOf(Math.max(...row)));
    };
    const fixed = opts({ ownSignals: 'fixed', clarityPercent: [50, 85] });
    for (let seed = 0; seed < 30; seed++) assert.deepEqual(ownOfA(fixed, seed), [0, 1]);
    const drawn = new Set(Array.from({ length: 30 }, (_, seed) => ownOfA(opts(), seed).join()));
    assert.ok(drawn.size >= 4, `pairings drawn over 30 episodes: ${[...drawn].join(' ')}`);
    assert.equal(hmmOptionsSchema.safeParse({ ownSignals: 'sorted' }).success, false);
  });

  it('rejects inconsistent options', () => {
    assert.equal(hmmOptionsSchema.safeParse({ states: 3, symbols: 2 }).success, false);
    assert.equal(hmmOptionsSchema.safeParse({ stayPercent: [90, 60] }).success, false);
    assert.equal(hmmOptionsSchema.safeParse({ states: 5 }).success, false);
    assert.equal(hmmOptionsSchema.safeParse({ hidden: 2 }).success, false);
  });
});

describe('forward algorithm', () => {
  it('matches brute-force enumeration of hidden paths on short chains', () => {
    const rng = new Rng(11);
    let checked = 0;
    for (const [k, s] of [[2, 2], [2, 3], [3, 3], [3, 4]]) {
      for (let trial = 0; trial < 5; trial++) {
        const m = model(k, s, 100 * k + trial);
        const signals = samplePath(m, 6, rng).signals;
        const filtered = forwardPosteriors(m.initial, m.transition, m.emission, signals);
        for (let t = 1; t <= signals.length; t++) {
          const brute = bruteForcePosterior(m, signals.slice(0, t));
          filtered[t - 1].forEach((p, i) => assert.ok(Math.abs(p - brute[i]) < 1e-12, `k=${k} t=${t}`));
          checked++;
        }
      }
    }
    assert.equal(checked, 120);
  });

  it('matches the frequency of the hidden state among sampled paths with the same signals', () => {
    const m = model(2, 3, 4);
    const target = [0, 0, 2];
    const posterior = forwardPosteriors(m.initial, m.transition, m.emission, target)[2];
    const rng = new Rng(99);
    let matched = 0;
    let inFirst = 0;
    for (let i = 0; i < 40000; i++) {
      const p = samplePath(m, 3, rng);
      if (p.signals.every((s, t) => s === target[t])) {
        matched++;
        if (p.states[2] === 0) inFirst++;
      }
    }
    const freq = inFirst / matched;
    const se = Math.sqrt((posterior[0] * (1 - posterior[0])) / matched);
    assert.ok(matched > 500);
    assert.ok(Math.abs(freq - posterior[0]) < 4 * se, `${freq} vs ${posterior[0]}`);
  });
});

describe('hmm env', () => {
  it('pays 1 for the true state and shows the model once', () => {
    const env = new HmmEnv(opts({ horizon: 3 }));
    const reset = env.reset(5);
    assert.match(reset.observation, /Hidden states: A, B\. Signals: x, y, z\./);
    assert.match(reset.observation, /Turn 1 of 3\. Signal: [xyz]\./);
    const s = env.step(guess('A'));
    assert.equal(s.reward, s.info!.state === 'A' ? 1 : 0);
    assert.doesNotMatch(s.observation, /Hidden states/);
    assert.match(s.observation, /Turn 2 of 3\. Signal: [xyz]\. Signals so far: [xyz], [xyz]\./);
    env.step(guess('B'));
    const end = env.step(guess('A'));
    assert.equal(end.done, true);
    assert.match(end.observation, /All 3 turns done: \d of 3 guesses were right/);
  });

  it('is deterministic under the seed and its path does not depend on the guesses', () => {
    const play = (seed: number, g: string) => {
      const env = new HmmEnv(opts());
      const trace: unknown[] = [env.reset(seed).observation];
      for (let i = 0; i < 10; i++) {
        const s = env.step(guess(g));
        trace.push(s.info!.state, s.observation.replace(/\d+ of 10 guesses/, ''));
      }
      return trace;
    };
    assert.deepEqual(play(3, 'A'), play(3, 'A'));
    assert.deepEqual(play(3, 'A'), play(3, 'B'));
    assert.notDeepEqual(play(3, 'A'), play(4, 'A'));
  });

  it('validates guesses', () => {
    const env = new HmmEnv(opts({ states: 3 }));
    env.reset(1);
    assert.equal(env.validate(guess('C')), null);
    assert.match(env.validate(guess('D'))!, /one of A, B, C \(got "D"\)/);
    assert.match(env.validate(guess('a'))!, /one of A, B, C/);
    assert.match(env.validate({ name: 'guess_state', arguments: {} })!, /one of A, B, C \(got undefined\)/);
    assert.match(env.validate({ name: 'guess_state', arguments: { state: 'A', sure: 1 } })!, /only 'state'/);
    assert.match(env.validate({ name: 'guess', arguments: { state: 'A' } })!, /unknown action 'guess'/);
    assert.deepEqual(env.legalActions(), [guess('A'), guess('B'), guess('C')]);
  });

  it('action rewards are the forward posterior and the oracle is its argmax with forecasts', () => {
    const env = new HmmEnv(opts({ states: 3, horizon: 6 }));
    env.reset(8);
    const signals: number[] = [];
    for (let t = 0; t < 6; t++) {
      const st = env.state();
      const m = { ...st, initial: st.initial } as unknown as HmmModel;
      signals.push(m.symbols.indexOf((st.signals as string[])[t]));
      const expected = forwardPosteriors(m.initial, m.transition, m.emission, signals)[t];
      const values = env.actionRewards().map((v) => v.expectedReward);
      values.forEach((v, k) => assert.ok(Math.abs(v - expected[k]) < 1e-12));
      const advice = env.oracle();
      const best = values.indexOf(Math.max(...values));
      assert.deepEqual(advice.action, guess(m.states[best]));
      assert.deepEqual(Object.keys(advice.forecasts!), ['p_state_A', 'p_state_B', 'p_state_C']);
      assert.equal(advice.forecasts!.p_state_B, values[1]);
      env.step(guess('B'));
    }
  });

  it('with reveal, conditions the next posterior on the revealed state', () => {
    const env = new HmmEnv(opts({ reveal: true, horizon: 4 }));
    env.reset(2);
    const st = env.state();
    const m = st as unknown as HmmModel;
    const s = env.step(guess('A'));
    assert.match(s.observation, new RegExp(`The state at turn 1 was ${s.info!.state}\\.`));
    const truth = m.states.indexOf(s.info!.state as string);
    const signal = m.symbols.indexOf((env.state().signals as string[])[1]);
    const expected = update(m.transition[truth], m.emission, signal);
    env.actionRewards().forEach((v, k) => assert.ok(Math.abs(v.expectedReward - expected[k]) < 1e-12));
  });

  it('action rewards are exact expected rewards: the reward minus the posterior averages to 0 over seeds', () => {
    let residual = 0;
    let sq = 0;
    let n = 0;
    let oracleSum = 0;
    let oracleReturnSum = 0;
    for (let seed = 0; seed < 1500; seed++) {
      const env = new HmmEnv(opts({ horizon: 5 }));
      env.reset(seed);
      let s: EnvStep;
      let t = 0;
      do {
        // Alternate a fixed guess and the oracle's, so both kinds of policy are checked.
        const action = t++ % 2 === 0 ? guess('A') : env.oracle().action;
        s = env.step(action);
        const r = s.reward - (s.info!.expectedReward as number);
        residual += r;
        sq += r * r;
        n++;
      } while (!s.done);
      const oracleEnv = new HmmEnv(opts({ horizon: 5 }));
      oracleEnv.reset(seed);
      let o: EnvStep;
      let ret = 0;
      do {
        o = oracleEnv.step(oracleEnv.oracle().action);
        ret += o.reward;
      } while (!o.done);
      oracleSum += ret;
      oracleReturnSum += o.info!.oracleReturn as number;
    }
    const mean = residual / n;
    const se = Math.sqrt(sq / n / n);
    assert.ok(Math.abs(mean) < 4 * se, `mean residual ${mean} (se ${se})`);
    // The oracle's realised return averages to its expected return reported in the final info.
    assert.ok(Math.abs(oracleSum - oracleReturnSum) / 1500 < 0.1, `${oracleSum / 1500} vs ${oracleReturnSum / 1500}`);
  });
});
