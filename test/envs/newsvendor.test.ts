import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Rng } from '../../src/core/random.ts';
import { demandCdf, demandPmf, sampleDemand, type DemandDistribution } from '../../src/envs/newsvendor/demand.ts';
import { NewsvendorEnv } from '../../src/envs/newsvendor/env.ts';
import { newsvendorOptionsSchema, type NewsvendorOptions } from '../../src/envs/newsvendor/options.ts';
import { criticalFractile, criticalRatio, expectedProfits, profit } from '../../src/envs/newsvendor/profit.ts';
import { newsvendorSpec } from '../../src/envs/newsvendor/spec.ts';
import type { EnvStep } from '../../src/envs/env.ts';

const opts = (raw: Record<string, unknown> = {}): NewsvendorOptions => newsvendorOptionsSchema.parse(raw);
const order = (quantity: number) => ({ name: 'order', arguments: { quantity } });
const fixed = { priceRange: [10, 10], costRange: [4, 4], salvageRange: [1, 1] };

describe('newsvendor options', () => {
  it('has defaults and rejects inconsistent economics and unknown keys', () => {
    assert.equal(opts().horizon, 5);
    assert.equal(newsvendorOptionsSchema.safeParse({ extra: 1 }).success, false);
    assert.equal(newsvendorOptionsSchema.safeParse({ costRange: [3, 9] }).success, false);
    assert.equal(newsvendorOptionsSchema.safeParse({ salvageRange: [0, 3] }).success, false);
    assert.equal(newsvendorOptionsSchema.safeParse({ demand: 'uniform', meanRange: [2, 10], uniformSpread: 3 }).success, false);
    assert.equal(newsvendorOptionsSchema.safeParse({ maxOrder: 5 }).success, false);
    assert.equal(newsvendorOptionsSchema.safeParse({ meanRange: [4.5, 8] }).success, false);
  });
});

describe('newsvendor math', () => {
  it('computes profit from sales, salvage and cost', () => {
    const u = { price: 10, cost: 4, salvage: 1 };
    assert.equal(profit(u, 8, 6), 60 + 2 - 32);
    assert.equal(profit(u, 5, 9), 50 - 20);
    assert.equal(profit(u, 0, 9), 0);
  });

  it('has proper Poisson and uniform distributions', () => {
    const pois = demandPmf({ kind: 'poisson', mean: 3 }, 60);
    assert.ok(Math.abs(pois.reduce((a, b) => a + b, 0) - 1) < 1e-12);
    assert.ok(Math.abs(pois[2] - (Math.exp(-3) * 9) / 2) < 1e-15);
    const uni = demandCdf({ kind: 'uniform', low: 3, high: 6 }, 8);
    assert.deepEqual(uni, [0, 0, 0, 0.25, 0.5, 0.75, 1, 1, 1]);
  });

  it('samples demand by inverse cdf', () => {
    const dist: DemandDistribution = { kind: 'poisson', mean: 2 };
    const cdf = demandCdf(dist, 20);
    assert.equal(sampleDemand(dist, 0), 0);
    assert.equal(sampleDemand(dist, cdf[0] - 1e-12), 0);
    assert.equal(sampleDemand(dist, cdf[0] + 1e-12), 1);
    assert.equal(sampleDemand(dist, cdf[3] + 1e-12), 4);
    assert.equal(sampleDemand({ kind: 'uniform', low: 3, high: 6 }, 0.999), 6);
  });

  it('expected profits equal the profit averaged over the exact demand pmf', () => {
    const u = { price: 11, cost: 5, salvage: 2 };
    const dist: DemandDistribution = { kind: 'poisson', mean: 6 };
    const pmf = demandPmf(dist, 200);
    const values = expectedProfits(u, dist, 25);
    for (const q of [0, 3, 6, 11, 25]) {
      const direct = pmf.reduce((s, p, d) => s + p * profit(u, q, d), 0);
      assert.ok(Math.abs(values[q] - direct) < 1e-9, `q=${q}`);
    }
  });

  it('the critical fractile is the argmax of exact expected profit over all quantities', () => {
    let checked = 0;
    for (const u of [
      { price: 10, cost: 4, salvage: 1 },
      { price: 8, cost: 6, salvage: 0 },
      { price: 12, cost: 3, salvage: 2 },
      { price: 5, cost: 4, salvage: 3 },
    ]) {
      for (const mean of [1, 4, 9, 15, 30]) {
        for (const dist of [{ kind: 'poisson', mean }, { kind: 'uniform', low: mean, high: mean + 7 }] as DemandDistribution[]) {
          const maxOrder = 80;
          const values = expectedProfits(u, dist, maxOrder);
          const best = Math.max(...values);
          const q = criticalFractile(u, dist, maxOrder);
          assert.ok(values[q] >= best - 1e-9, `${JSON.stringify(u)} ${JSON.stringify(dist)}: Q*=${q}`);
          // And it is the least maximiser.
          for (let k = 0; k < q; k++) assert.ok(values[k] < best - 1e-12);
          checked++;
        }
      }
    }
    assert.equal(checked, 40);
    // A worked case: ratio (10 − 4)/(10 − 1) = 2/3; Poisson(4) has F(4) = 0.629, F(5) = 0.785, so Q* = 5.
    assert.ok(Math.abs(criticalRatio({ price: 10, cost: 4, salvage: 1 }) - 2 / 3) < 1e-15);
    assert.equal(criticalFractile({ price: 10, cost: 4, salvage: 1 }, { kind: 'poisson', mean: 4 }, 30), 5);
  });

  it('caps the oracle at the largest legal order', () => {
    assert.equal(criticalFractile({ price: 10, cost: 1, salvage: 0 }, { kind: 'poisson', mean: 20 }, 12), 12);
  });
});

describe('newsvendor env', () => {
  it('pays the day profit and reports demand', () => {
    const env = new NewsvendorEnv(opts({ ...fixed, horizon: 2 }));
    const reset = env.reset(3);
    assert.match(reset.observation, /Day 1 of 2/);
    assert.match(reset.observation, /sell at 10 per unit; each unit you order costs 4; unsold units are salvaged at 1/);
    const s = env.step(order(7));
    const d = s.info!.demand as number;
    assert.equal(s.reward, profit({ price: 10, cost: 4, salvage: 1 }, 7, d));
    assert.match(s.observation, new RegExp(`ordered 7, demand was ${d}`));
    assert.equal(s.done, false);
    const end = env.step(order(0));
    assert.equal(end.done, true);
    assert.equal(end.reward, 0);
    assert.equal(end.info!.totalProfit, s.reward);
    assert.match(end.observation, /All 2 days done/);
  });

  it('is deterministic under the seed and draws demand independently of orders', () => {
    const play = (seed: number, q: number) => {
      const env = new NewsvendorEnv(opts());
      const trace: unknown[] = [env.reset(seed).observation];
      for (let i = 0; i < 5; i++) trace.push(env.step(order(q)).info!.demand);
      return trace;
    };
    assert.deepEqual(play(9, 4), play(9, 4));
    assert.deepEqual(play(9, 4).slice(1), play(9, 20).slice(1));
    assert.notDeepEqual(play(9, 4), play(10, 4));
  });

  it('validates orders', () => {
    const env = new NewsvendorEnv(opts());
    env.reset(0);
    assert.equal(env.validate(order(0)), null);
    assert.equal(env.validate(order(30)), null);
    assert.match(env.validate(order(31))!, /from 0 to 30 \(got 31\)/);
    assert.match(env.validate(order(-1))!, /got -1/);
    assert.match(env.validate(order(2.5))!, /whole number/);
    assert.match(env.validate({ name: 'order', arguments: { quantity: '5' } })!, /whole number/);
    assert.match(env.validate({ name: 'order', arguments: { quantity: 5, rush: true } })!, /only 'quantity'/);
    assert.match(env.validate({ name: 'buy', arguments: {} })!, /unknown action 'buy'/);
    assert.equal(env.legalActions().length, 31);
  });

  it('scores every legal order exactly: matches a Monte Carlo estimate from the env itself', () => {
    const o = opts({ ...fixed, meanRange: [6, 6], horizon: 1 });
    const probe = new NewsvendorEnv(o);
    probe.reset(0);
    const values = probe.actionRewards();
    assert.equal(values.length, 31);
    const n = 2000;
    for (const q of [3, 6, 10]) {
      const exact = values[q].expectedReward;
      let sum = 0;
      let sumSq = 0;
      for (let seed = 0; seed < n; seed++) {
        const env = new NewsvendorEnv(o);
        env.reset(seed);
        const r = env.step(order(q)).reward;
        sum += r;
        sumSq += r * r;
      }
      const mean = sum / n;
      const se = Math.sqrt((sumSq / n - mean * mean) / n);
      assert.ok(Math.abs(mean - exact) < 4 * se, `q=${q}: MC ${mean} vs exact ${exact} (se ${se})`);
    }
  });

  it('oracle orders the critical fractile and the oracle return sums its expected profits', () => {
    const env = new NewsvendorEnv(opts({ ...fixed, meanRange: [4, 4], horizon: 3 }));
    env.reset(2);
    const advice = env.oracle();
    assert.deepEqual(advice.action, order(5));
    const best = Math.max(...env.actionRewards().map((v) => v.expectedReward));
    assert.equal(advice.forecasts!.expected_profit, best);
    let s: EnvStep;
    do s = env.step(env.oracle().action);
    while (!s.done);
    assert.ok(Math.abs((s.info!.oracleReturn as number) - 3 * best) < 1e-9);
  });

  it('exact optimal return is the mean over the parameter draw, and per-seed oracle returns average to it', () => {
    const o = opts({ horizon: 2, priceRange: [9, 10], costRange: [4, 4], salvageRange: [0, 1], meanRange: [5, 6] });
    const exact = newsvendorSpec.exact!.optimalReturn!(o);
    let manual = 0;
    for (const price of [9, 10]) {
      for (const salvage of [0, 1]) {
        for (const mean of [5, 6]) {
          const u = { price, cost: 4, salvage };
          const dist: DemandDistribution = { kind: 'poisson', mean };
          manual += 2 * expectedProfits(u, dist, 30)[criticalFractile(u, dist, 30)];
        }
      }
    }
    assert.ok(Math.abs(exact - manual / 8) < 1e-9);
    let sum = 0;
    const n = 800;
    const rng = new Rng(1);
    for (let i = 0; i < n; i++) {
      const env = new NewsvendorEnv(o);
      env.reset(rng.nextUint32());
      let s: EnvStep;
      do s = env.step(order(0));
      while (!s.done);
      sum += s.info!.oracleReturn as number;
    }
    assert.ok(Math.abs(sum / n - exact) < 0.03 * exact, `${sum / n} vs ${exact}`);
    assert.throws(() => newsvendorSpec.exact!.optimalReturn!(opts({ priceRange: [500, 1000], costRange: [100, 499], salvageRange: [0, 99], maxOrder: 200 })), /narrow the ranges/);
  });
});
