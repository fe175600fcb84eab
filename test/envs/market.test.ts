import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Rng } from '../../src/core/random.ts';
import type { Action, EnvStep } from '../../src/envs/env.ts';
import { MarketEnv } from '../../src/envs/market/env.ts';
import { marketOptionsSchema, type MarketOptions } from '../../src/envs/market/options.ts';
import { expectedMove, moveVariance, nextPrice, type MarketPath } from '../../src/envs/market/prices.ts';
import { marketSpec } from '../../src/envs/market/spec.ts';
import { expectedTickReward } from '../../src/envs/market/tick-reward.ts';

const opts = (raw: Record<string, unknown> = {}): MarketOptions => marketOptionsSchema.parse(raw);
const buy = (asset: string, quantity: number): Action => ({ name: 'buy', arguments: { asset, quantity } });
const sell = (asset: string, quantity: number): Action => ({ name: 'sell', arguments: { asset, quantity } });
const wait: Action = { name: 'wait', arguments: {} };
/** One known asset: drift +1 %/tick, volatility 2 %/tick. */
const known = { assets: 1, driftsPercent: [1], volPercentRange: [2, 2] };
const knownPath = (n: number): MarketPath => ({ names: [], drifts: new Array(n).fill(0.01), vols: new Array(n).fill(0.02), prices: [] });

function meanSe(xs: number[]): { mean: number; se: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1);
  return { mean, se: Math.sqrt(variance / xs.length) };
}

describe('market options', () => {
  it('has defaults and rejects bad values naming them', () => {
    const o = opts();
    assert.equal(o.assets, 3);
    assert.equal(o.formatWeight, 0.2);
    assert.equal(marketOptionsSchema.safeParse({ leverage: 2 }).success, false);
    assert.equal(marketOptionsSchema.safeParse({ assets: 5 }).success, false);
    assert.equal(marketOptionsSchema.safeParse({ reasoningMinWords: 50, reasoningMaxWords: 10 }).success, false);
    assert.equal(marketOptionsSchema.safeParse({ volPercentRange: [1.01, 1.09] }).success, false);
    assert.equal(marketOptionsSchema.safeParse({ driftsPercent: [] }).success, false);
  });
});

describe('market prices', () => {
  it('moves have mean e^μ and the lognormal variance', () => {
    const rng = new Rng(4);
    const [mu, sigma] = [0.01, 0.03];
    const moves = Array.from({ length: 20000 }, () => nextPrice(100, mu, sigma, rng.normal()) / 100);
    const { mean, se } = meanSe(moves);
    assert.ok(Math.abs(mean - 1 - expectedMove(mu)) < 4 * se, `${mean}`);
    const variance = moves.reduce((a, m) => a + (m - mean) ** 2, 0) / (moves.length - 1);
    assert.ok(Math.abs(variance / moveVariance(mu, sigma) - 1) < 0.05, `${variance} vs ${moveVariance(mu, sigma)}`);
  });
});

describe('market env', () => {
  it('trades at the current price and pays pnl and risk parts', () => {
    const o = opts({ ...known, riskAversion: 2 });
    const env = new MarketEnv(o);
    const reset = env.reset(1);
    assert.match(reset.observation, /Tick 1 of 10\. Cash 10000\.00\./);
    assert.match(reset.observation, /ACME price \d+\.\d\d, expected move \+1\.01%\/tick, volatility 2\.0%\/tick, you hold 0/);
    const p0 = (env.state().prices as Record<string, number>).ACME;
    const s = env.step(buy('ACME', 10));
    const p1 = (s.info!.prices as Record<string, number>).ACME;
    assert.ok(Math.abs((s.info!.balance as number) - (10000 - 10 * p0)) < 1e-9);
    assert.deepEqual(s.info!.positions, { ACME: 10 });
    const a = (100 * 10 * p0) / 10000;
    assert.ok(Math.abs(s.rewardParts!.pnl - (100 * 10 * (p1 - p0)) / 10000) < 1e-9);
    assert.ok(Math.abs(s.rewardParts!.risk - -(2 / 2) * a * a * moveVariance(0.01, 0.02)) < 1e-12);
    assert.equal(s.reward, s.rewardParts!.pnl + s.rewardParts!.risk);
    assert.match(s.observation, /Last tick: you bought 10 ACME at/);
    assert.ok(Math.abs((s.info!.exposure as number) - (10 * p1) / 10000) < 1e-12);
    const flat = new MarketEnv(o);
    flat.reset(1);
    assert.deepEqual(flat.step(wait).rewardParts, { pnl: 0, risk: 0 });
  });

  it('ends after the horizon', () => {
    const env = new MarketEnv(opts({ horizon: 2 }));
    env.reset(0);
    env.step(wait);
    const end = env.step(wait);
    assert.equal(end.done, true);
    assert.match(end.observation, /All 2 ticks done/);
    assert.throws(() => env.step(wait), /episode is over/);
  });

  it('is deterministic under the seed and its prices do not depend on the actions', () => {
    const prices = (seed: number, actions: Action[]) => {
      const env = new MarketEnv(opts({ horizon: 4 }));
      const trace: unknown[] = [env.reset(seed).observation.split('\n').slice(1, 4)];
      for (const a of actions) trace.push(env.step(a).info!.prices);
      return trace;
    };
    const a = [wait, wait, wait, wait];
    const b = [buy('ACME', 3), sell('BOLT', 5), wait, buy('CORE', 1)];
    assert.deepEqual(prices(8, a), prices(8, a));
    assert.deepEqual(prices(8, a).slice(1), prices(8, b).slice(1));
    assert.notDeepEqual(prices(8, a), prices(9, a));
  });

  it('validates actions', () => {
    const env = new MarketEnv(opts({ maxPosition: 15 }));
    env.reset(3);
    assert.equal(env.validate(buy('ACME', 10)), null);
    assert.equal(env.validate(sell('CORE', 10)), null);
    assert.equal(env.validate(wait), null);
    assert.match(env.validate(buy('ZED', 1))!, /asset must be one of ACME, BOLT, CORE \(got "ZED"\)/);
    assert.match(env.validate(buy('ACME', 11))!, /at most 10 per trade/);
    assert.match(env.validate(buy('ACME', 0))!, /from 1 to 10/);
    assert.match(env.validate(buy('ACME', 2.5))!, /whole number/);
    assert.match(env.validate({ name: 'buy', arguments: { asset: 'ACME', quantity: 1, limit: 5 } })!, /only 'asset' and 'quantity'/);
    assert.match(env.validate({ name: 'wait', arguments: { ticks: 2 } })!, /takes no arguments/);
    assert.match(env.validate({ name: 'get_price', arguments: { asset: 'ACME' } })!, /only looks up a price/);
    assert.match(env.validate({ name: 'short', arguments: {} })!, /unknown action 'short'/);
    env.step(buy('ACME', 10));
    assert.match(env.validate(buy('ACME', 6))!, /position in ACME would be 16, above the limit of 15/);
    assert.throws(() => env.step(buy('ACME', 6)), /illegal action/);

    const poor = new MarketEnv(opts({ balance: 100, priceRange: [50, 60] }));
    poor.reset(0);
    assert.match(poor.validate(buy('ACME', 2))!, /costs \d+\.\d\d but your balance is 100\.00/);
    const longOnly = new MarketEnv(opts({ allowShort: false }));
    longOnly.reset(0);
    assert.match(longOnly.validate(sell('ACME', 1))!, /short selling is not allowed/);
    assert.deepEqual(longOnly.legalActions().filter((a) => a.name === 'sell'), []);
  });

  it('lists legal actions: wait first, then every allowed trade', () => {
    const env = new MarketEnv(opts());
    env.reset(0);
    const legal = env.legalActions();
    assert.deepEqual(legal[0], wait);
    assert.equal(legal.length, 1 + 3 * 2 * 10);
    for (const a of legal) assert.equal(env.validate(a), null);
  });

  it('answers get_price with the recent history without ending the tick', () => {
    const env = new MarketEnv(opts({ historyLength: 4 }));
    const reset = env.reset(2);
    const tool = reset.tools.find((t) => t.name === 'get_price')!;
    assert.equal(tool.informational, true);
    assert.ok(reset.tools.filter((t) => t.name !== 'get_price').every((t) => !t.informational));
    const answer = env.inform({ name: 'get_price', arguments: { asset: 'BOLT' } });
    const now = (env.state().prices as Record<string, number>).BOLT.toFixed(2);
    assert.match(answer, new RegExp(`^BOLT: ${now} now\\. Last 4 prices \\(oldest first\\): [\\d.]+, [\\d.]+, [\\d.]+, ${now}\\. Outlook: expected move`));
    assert.equal(env.state().tick, 0);
    assert.match(env.inform({ name: 'get_price', arguments: { asset: 'NOPE' } }), /asset must be one of/);
    const hidden = new MarketEnv(opts({ showOutlook: false }));
    const obs = hidden.reset(2).observation;
    assert.doesNotMatch(obs, /expected move/);
    assert.doesNotMatch(hidden.inform({ name: 'get_price', arguments: { asset: 'ACME' } }), /Outlook/);
  });

  it('oracle maximises the exact expected tick reward over the legal actions', () => {
    for (const riskAversion of [0.2, 1, 5, 50]) {
      const env = new MarketEnv(opts({ ...known, assets: 3, riskAversion }));
      env.reset(riskAversion * 10);
      for (let t = 0; t < 6; t++) {
        const st = env.state();
        const prices = Object.values(st.prices as Record<string, number>);
        const positions = Object.values(st.positions as Record<string, number>);
        const value = (a: Action) => {
          const q = [...positions];
          if (a.name !== 'wait') q[['ACME', 'BOLT', 'CORE'].indexOf(a.arguments.asset as string)] += (a.name === 'buy' ? 1 : -1) * (a.arguments.quantity as number);
          return expectedTickReward(q, prices, knownPath(3), riskAversion, 10000);
        };
        const best = Math.max(...env.legalActions().map(value));
        const advice = env.oracle();
        assert.ok(Math.abs(value(advice.action) - best) < 1e-12);
        assert.ok(Math.abs(advice.forecasts!.expected_reward - best) < 1e-12);
        assert.ok(Math.abs(advice.forecasts!.expected_move_ACME - Math.expm1(0.01)) < 1e-15);
        env.step(advice.action);
      }
    }
    // No edge: the oracle waits; shorting forbidden with a falling asset: it waits too.
    const flat = new MarketEnv(opts({ ...known, driftsPercent: [0] }));
    flat.reset(1);
    assert.deepEqual(flat.oracle().action, wait);
    const falling = new MarketEnv(opts({ ...known, driftsPercent: [-1], allowShort: false }));
    falling.reset(1);
    assert.deepEqual(falling.oracle().action, wait);
    const rising = new MarketEnv(opts({ ...known, riskAversion: 0.1 }));
    rising.reset(1);
    assert.deepEqual(rising.oracle().action, buy('ACME', 10));
  });

  it("the oracle's expected tick reward matches the env's realised rewards on average", () => {
    const residuals: number[] = [];
    let oracleTotal = 0;
    let randomTotal = 0;
    const episodes = 150;
    for (let seed = 0; seed < episodes; seed++) {
      const env = new MarketEnv(opts({ horizon: 5 }));
      env.reset(seed);
      let s: EnvStep;
      do {
        const advice = env.oracle();
        s = env.step(advice.action);
        residuals.push(s.reward - advice.forecasts!.expected_reward);
        oracleTotal += s.reward;
      } while (!s.done);
      const random = new MarketEnv(opts({ horizon: 5 }));
      random.reset(seed);
      const pick = new Rng(seed, 7);
      do {
        const legal = random.legalActions();
        s = random.step(legal[pick.int(legal.length)]);
        randomTotal += s.reward;
      } while (!s.done);
    }
    const { mean, se } = meanSe(residuals);
    assert.ok(Math.abs(mean) < 4 * se, `mean residual ${mean} (se ${se})`);
    assert.ok(oracleTotal / episodes > randomTotal / episodes + 0.2, `oracle ${oracleTotal / episodes} vs random ${randomTotal / episodes}`);
  });

  it('asks for format and reasoning rewards with weights from its options', () => {
    const config = marketSpec.rewards!(opts({ formatWeight: 0.5, pnlWeight: 2 }));
    assert.deepEqual(config.fns.map((f) => f.name), ['format', 'reasoning']);
    assert.deepEqual(config.weights, { pnl: 2, risk: 1, format: 0.5, reasoning: 0.2 });
  });
});
