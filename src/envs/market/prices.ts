/**
 * Asset prices: geometric Brownian motion per tick, P' = P·exp(μ − σ²/2 + σ·ε) with ε ~ N(0, 1),
 * so E[P'/P] = e^μ whatever σ. Each asset's drift μ and volatility σ are fixed for the episode.
 */
import type { Rng } from '../../core/random.ts';
import type { MarketOptions } from './options.ts';

export const ASSET_NAMES = ['ACME', 'BOLT', 'CORE', 'DUNE'];

export interface MarketPath {
  names: string[];
  /** μ per asset, as a fraction (0.005 = 0.5 %). */
  drifts: number[];
  /** σ per asset, as a fraction. */
  vols: number[];
  /** prices[t][i]: price of asset i at path step t; the agent's tick k sees step historyLength + k. */
  prices: number[][];
}

/** E[P'/P − 1] = e^μ − 1. */
export function expectedMove(drift: number): number {
  return Math.expm1(drift);
}

/** Var[P'/P] = e^{2μ}·(e^{σ²} − 1), the variance of a lognormal move. */
export function moveVariance(drift: number, vol: number): number {
  return Math.exp(2 * drift) * Math.expm1(vol * vol);
}

export function nextPrice(price: number, drift: number, vol: number, shock: number): number {
  return price * Math.exp(drift - (vol * vol) / 2 + vol * shock);
}

/** Draws the assets' parameters (from `params`) and the whole price path (from `shocks`), before any action. */
export function drawMarket(o: MarketOptions, params: Rng, shocks: Rng): MarketPath {
  const names = ASSET_NAMES.slice(0, o.assets);
  const volSteps = Math.floor(o.volPercentRange[1] * 10 + 1e-9) - Math.ceil(o.volPercentRange[0] * 10 - 1e-9) + 1;
  const volLow = Math.ceil(o.volPercentRange[0] * 10 - 1e-9);
  const drifts = names.map(() => o.driftsPercent[params.int(o.driftsPercent.length)] / 100);
  const vols = names.map(() => (volLow + params.int(volSteps)) / 1000);
  const first = names.map(() => Math.round((o.priceRange[0] + params.next() * (o.priceRange[1] - o.priceRange[0])) * 100) / 100);
  const prices = [first];
  for (let t = 1; t <= o.historyLength + o.horizon; t++) {
    const prev = prices[t - 1];
    prices.push(prev.map((p, i) => nextPrice(p, drifts[i], vols[i], shocks.normal())));
  }
  return { names, drifts, vols, prices };
}
