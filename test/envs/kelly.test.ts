import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KellyEnv } from '../../src/envs/kelly/env.ts';
import { bestGridFraction, expectedLogGrowth, fractionGrid, kellyFraction } from '../../src/envs/kelly/growth.ts';
import { kellyOptionsSchema, type KellyOptions } from '../../src/envs/kelly/options.ts';
import { kellySpec } from '../../src/envs/kelly/spec.ts';
import type { EnvStep } from '../../src/envs/env.ts';

const opts = (raw: Record<string, unknown> = {}): KellyOptions => kellyOptionsSchema.parse(raw);
const bet = (fraction: number) => ({ name: 'bet', arguments: { fraction } });

describe('kelly options', () => {
  it('has defaults and rejects unknown keys and bad ranges', () => {
    const o = opts();
    assert.equal(o.horizon, 10);
    assert.deepEqual(o.winProbRange, [0.4, 0.75]);
    assert.equal(kellyOptionsSchema.safeParse({ colour: 'red' }).success, false);
    assert.equal(kellyOptionsSchema.safeParse({ maxFraction: 1 }).success, false);
    assert.equal(kellyOptionsSchema.safeParse({ winProbRange: [0.7, 0.4] }).success, false);
    assert.equal(kellyOptionsSchema.safeParse({ fractionStep: 0.5, maxFraction: 0.3 }).success, false);
    assert.equal(kellyOptionsSchema.safeParse({ horizon: 0 }).success, false);
  });
});

describe('kelly math', () => {
  it('builds a clean stake grid', () => {
    const grid = fractionGrid(0.05, 0.95);
    assert.equal(grid.length, 20);
    assert.equal(grid[3], 0.15);
    assert.equal(grid[19], 0.95);
  });

  it('f* is the stationary point of the expected log growth, 0 without an edge', () => {
    assert.equal(kellyFraction(0.6, 1), 0.19999999999999996);
    assert.equal(kellyFraction(0.4, 1), 0);
    const [p, b] = [0.55, 2];
    const f = kellyFraction(p, b);
    assert.ok(Math.abs(f - 0.325) < 1e-12);
    const h = 1e-5;
    const slope = (expectedLogGrowth(p, b, f + h) - expectedLogGrowth(p, b, f - h)) / (2 * h);
    assert.ok(Math.abs(slope) < 1e-8);
    assert.ok(expectedLogGrowth(p, b, f) > expectedLogGrowth(p, b, f + 0.01));
    assert.ok(expectedLogGrowth(p, b, f) > expectedLogGrowth(p, b, f - 0.01));
  });

  it('the snapped oracle stake is the grid argmax of expected log growth', () => {
    const grid = fractionGrid(0.05, 0.95);
    let checked = 0;
    for (let pk = 1; pk <= 99; pk += 2) {
      for (let bk = 1; bk <= 60; bk += 3) {
        const [p, b] = [pk / 100, bk / 10];
        let best = grid[0];
        for (const f of grid) if (expectedLogGrowth(p, b, f) > expectedLogGrowth(p, b, best)) best = f;
        assert.equal(bestGridFraction(p, b, grid), best, `p=${p} b=${b}`);
        checked++;
      }
    }
    assert.equal(checked, 1000);
  });
});

describe('kelly env', () => {
  it('updates the bankroll and pays the log growth', () => {
    const env = new KellyEnv(opts({ winProbRange: [0.6, 0.6], oddsRange: [2, 2], bankroll: 100 }));
    const reset = env.reset(7);
    assert.match(reset.observation, /probability 0\.6 /);
    assert.match(reset.observation, /pays 2 times/);
    const s = env.step(bet(0.25));
    const expected = s.info!.won ? 150 : 75;
    assert.ok(Math.abs((s.info!.bankroll as number) - expected) < 1e-9);
    assert.ok(Math.abs(s.reward - Math.log(expected / 100)) < 1e-12);
    assert.equal(s.done, false);
    const zero = env.step(bet(0));
    assert.equal(zero.reward, 0);
    assert.match(zero.observation, /Bet 3 of 10/);
  });

  it('ends after the horizon with the log growth and the oracle return', () => {
    const env = new KellyEnv(opts({ horizon: 3, winProbRange: [0.6, 0.6], oddsRange: [1, 1] }));
    env.reset(1);
    let total = 0;
    let last: EnvStep | undefined;
    for (let i = 0; i < 3; i++) {
      last = env.step(bet(0.1));
      total += last.reward;
    }
    assert.equal(last!.done, true);
    assert.ok(Math.abs((last!.info!.logGrowth as number) - total) < 1e-12);
    // Best grid stake at p = 0.6, b = 1 is 0.2 (f* = 0.2).
    assert.ok(Math.abs((last!.info!.oracleReturn as number) - 3 * expectedLogGrowth(0.6, 1, 0.2)) < 1e-12);
    assert.throws(() => env.step(bet(0.1)), /episode is over/);
  });

  it('is deterministic under the seed', () => {
    const play = (seed: number) => {
      const env = new KellyEnv(opts());
      const trace: unknown[] = [env.reset(seed).observation];
      for (let i = 0; i < 10; i++) {
        const s = env.step(bet(0.1 * (i % 3)));
        trace.push(s.observation, s.reward);
      }
      return trace;
    };
    assert.deepEqual(play(42), play(42));
    assert.notDeepEqual(play(42), play(43));
  });

  it('draws outcomes independently of the stakes', () => {
    const wins = (fraction: number) => {
      const env = new KellyEnv(opts());
      env.reset(5);
      return Array.from({ length: 10 }, () => env.step(bet(fraction)).info!.won);
    };
    assert.deepEqual(wins(0), wins(0.5));
  });

  it('validates actions', () => {
    const env = new KellyEnv(opts());
    env.reset(0);
    assert.equal(env.validate(bet(0.15)), null);
    assert.equal(env.validate(bet(0)), null);
    assert.match(env.validate(bet(1))!, /one of 0, 0\.05, 0\.1, \.\.\., 0\.95/);
    assert.match(env.validate(bet(0.33))!, /got 0\.33/);
    assert.match(env.validate({ name: 'bet', arguments: { fraction: '0.1' } })!, /must be a number/);
    assert.match(env.validate({ name: 'bet', arguments: {} })!, /must be a number/);
    assert.match(env.validate({ name: 'bet', arguments: { fraction: 0.1, all: true } })!, /only 'fraction'/);
    assert.match(env.validate({ name: 'fold', arguments: {} })!, /unknown action 'fold'/);
    assert.equal(env.legalActions().length, 20);
    assert.throws(() => env.step(bet(0.33)), /illegal action/);
  });

  it('scores every legal stake exactly: matches a Monte Carlo estimate from the env itself', () => {
    const o = opts({ winProbRange: [0.55, 0.55], oddsRange: [1.5, 1.5] });
    const probe = new KellyEnv(o);
    probe.reset(0);
    const values = probe.actionRewards();
    assert.equal(values.length, 20);
    const n = 3000;
    for (const fraction of [0.1, 0.5, 0.9]) {
      const exact = values.find((v) => v.action.arguments.fraction === fraction)!.expectedReward;
      assert.ok(Math.abs(exact - expectedLogGrowth(0.55, 1.5, fraction)) < 1e-15);
      let sum = 0;
      let sumSq = 0;
      for (let seed = 0; seed < n; seed++) {
        const env = new KellyEnv(o);
        env.reset(seed);
        const r = env.step(bet(fraction)).reward;
        sum += r;
        sumSq += r * r;
      }
      const mean = sum / n;
      const se = Math.sqrt((sumSq / n - mean * mean) / n);
      assert.ok(Math.abs(mean - exact) < 4 * se, `f=${fraction}: MC ${mean} vs exact ${exact} (se ${se})`);
    }
  });

  it('oracle advises the best grid stake and forecasts f*', () => {
    const env = new KellyEnv(opts({ winProbRange: [0.55, 0.55], oddsRange: [2, 2] }));
    env.reset(3);
    const advice = env.oracle();
    // f* = 0.325 lies between 0.3 and 0.35; g(0.3) = 0.09800 beats g(0.35) = 0.09799 (growth is skewed).
    assert.deepEqual(advice.action, bet(0.3));
    assert.ok(Math.abs(advice.forecasts!.kelly_fraction - 0.325) < 1e-12);
    const best = Math.max(...env.actionRewards().map((v) => v.expectedReward));
    assert.equal(advice.forecasts!.expected_log_growth, best);
  });

  it('exact optimal return averages the per-episode oracle return over the parameter draw', () => {
    const o = opts({ horizon: 4, winProbRange: [0.5, 0.53], oddsRange: [1, 1.2] });
    const exact = kellySpec.exact!.optimalReturn!(o);
    let manual = 0;
    for (const p of [0.5, 0.51, 0.52, 0.53]) {
      for (const b of [1, 1.1, 1.2]) manual += 4 * expectedLogGrowth(p, b, bestGridFraction(p, b, fractionGrid(0.05, 0.95)));
    }
    assert.ok(Math.abs(exact - manual / 12) < 1e-12);
    // Averaging the per-seed oracle return over many seeds converges to it.
    let sum = 0;
    const n = 600;
    for (let seed = 0; seed < n; seed++) {
      const env = new KellyEnv(o);
      env.reset(seed);
      let s: EnvStep;
      do s = env.step(env.oracle().action);
      while (!s.done);
      sum += s.info!.oracleReturn as number;
    }
    assert.ok(Math.abs(sum / n - exact) < 0.15 * exact, `${sum / n} vs ${exact}`);
  });
});
