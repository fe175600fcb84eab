/** Newsvendor economics: realised and exact expected profit of an order, and the critical fractile. */
import { demandCdf, type DemandDistribution } from './demand.ts';

export interface UnitEconomics {
  /** Selling price per unit. */
  price: number;
  /** Purchase cost per unit ordered. */
  cost: number;
  /** What each unsold unit fetches at the end of the day. */
  salvage: number;
}

/** profit = price·min(q, d) + salvage·(q − d)⁺ − cost·q. */
export function profit(u: UnitEconomics, quantity: number, demand: number): number {
  const sold = Math.min(quantity, demand);
  return u.price * sold + u.salvage * (quantity - sold) - u.cost * quantity;
}

/**
 * Exact E[profit(q)] for q = 0..maxOrder: (price − salvage)·E[min(q, D)] − (cost − salvage)·q,
 * with E[min(q, D)] = Σ_{k<q} P(D > k).
 */
export function expectedProfits(u: UnitEconomics, dist: DemandDistribution, maxOrder: number): number[] {
  const cdf = demandCdf(dist, maxOrder);
  const out: number[] = [];
  let expectedSales = 0;
  for (let q = 0; q <= maxOrder; q++) {
    if (q > 0) expectedSales += 1 - cdf[q - 1];
    out.push((u.price - u.salvage) * expectedSales - (u.cost - u.salvage) * q);
  }
  return out;
}

/** c_u / (c_u + c_o) with underage cost c_u = price − cost and overage cost c_o = cost − salvage. */
export function criticalRatio(u: UnitEconomics): number {
  return (u.price - u.cost) / (u.price - u.salvage);
}

/**
 * Q* = F⁻¹(c_u / (c_u + c_o)) = the least q with F(q) ≥ the critical ratio, capped at maxOrder
 * (expected profit is concave in q, so the cap is the best legal order when Q* lies beyond it).
 */
export function criticalFractile(u: UnitEconomics, dist: DemandDistribution, maxOrder: number): number {
  const ratio = criticalRatio(u);
  const cdf = demandCdf(dist, maxOrder);
  const q = cdf.findIndex((f) => f >= ratio);
  return q < 0 ? maxOrder : q;
}
