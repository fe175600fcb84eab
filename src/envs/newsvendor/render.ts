/** The newsvendor env's observations, as short text for an LLM. */
import { describeDemand, type DemandDistribution } from './demand.ts';
import type { UnitEconomics } from './profit.ts';

export interface DayResult {
  ordered: number;
  demand: number;
  profit: number;
}

export interface NewsvendorView {
  day: number;
  horizon: number;
  economics: UnitEconomics;
  demand: DemandDistribution | null;
  maxOrder: number;
  last: DayResult | null;
  totalProfit: number;
}

function describeResult(r: DayResult): string {
  const sold = Math.min(r.ordered, r.demand);
  return `Yesterday: ordered ${r.ordered}, demand was ${r.demand}, sold ${sold}, ${r.ordered - sold} left over; profit ${r.profit}.`;
}

export function renderNewsvendor(v: NewsvendorView): string {
  const lines: string[] = [];
  if (v.last) lines.push(describeResult(v.last));
  if (!v.demand) {
    lines.push(`All ${v.horizon} days done. Total profit ${v.totalProfit}.`);
    return lines.join('\n');
  }
  const e = v.economics;
  lines.push(`Day ${v.day + 1} of ${v.horizon}. Total profit so far ${v.totalProfit}.`);
  lines.push(`You sell at ${e.price} per unit; each unit you order costs ${e.cost}; unsold units are salvaged at ${e.salvage} each and do not carry over.`);
  lines.push(`Today's demand is ${describeDemand(v.demand)}.`);
  lines.push(`Order between 0 and ${v.maxOrder} units.`);
  return lines.join('\n');
}
