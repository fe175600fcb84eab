/**
 * The market env's reward parts per tick, in points (% of the starting balance B0):
 *   pnl  = 100·(equity after the price move − equity before) / B0
 *   risk = −(λ/2)·Var[pnl] = −(λ/2)·Σ_i a_i²·Var[P'_i/P_i], with a_i = 100·q_i·P_i / B0 the exposure to asset i
 * (price moves of different assets are independent). Risk depends only on the positions held through the
 * tick, so it is known when the action is taken.
 */
import { expectedMove, moveVariance, type MarketPath } from './prices.ts';

export function exposurePoints(positions: readonly number[], prices: readonly number[], balance: number): number[] {
  return positions.map((q, i) => (100 * q * prices[i]) / balance);
}

export function riskPart(positions: readonly number[], prices: readonly number[], path: MarketPath, riskAversion: number, balance: number): number {
  const a = exposurePoints(positions, prices, balance);
  const variance = a.reduce((sum, x, i) => sum + x * x * moveVariance(path.drifts[i], path.vols[i]), 0);
  return variance === 0 ? 0 : (-riskAversion / 2) * variance;
}

/** E[pnl] = Σ_i a_i·(e^{μ_i} − 1). */
export function expectedPnl(positions: readonly number[], prices: readonly number[], path: MarketPath, balance: number): number {
  return exposurePoints(positions, prices, balance).reduce((sum, x, i) => sum + x * expectedMove(path.drifts[i]), 0);
}

/** The exact expected reward (pnl + risk) of holding `positions` through the next tick. */
export function expectedTickReward(positions: readonly number[], prices: readonly number[], path: MarketPath, riskAversion: number, balance: number): number {
  return expectedPnl(positions, prices, path, balance) + riskPart(positions, prices, path, riskAversion, balance);
}
