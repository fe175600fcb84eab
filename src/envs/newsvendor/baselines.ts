/** The newsvendor's simple baseline: order the day's mean demand, whatever the prices. */
import { legalActionWhere } from '../baseline-rules.ts';
import type { EnvBaseline } from '../env.ts';
import type { DemandDistribution } from './demand.ts';

function meanDemand(dist: DemandDistribution): number {
  return dist.kind === 'poisson' ? dist.mean : (dist.low + dist.high) / 2;
}

export const newsvendorBaselines: Record<string, EnvBaseline> = {
  'order-mean': {
    description: "order the day's mean demand (rounded, within the order limits), ignoring price, cost and salvage",
    choose(view) {
      const { demand } = view.state() as { demand: DemandDistribution | null };
      if (!demand) throw new Error("baseline 'order-mean': no demand distribution today (the episode has ended)");
      const quantities = view.legalActions().map((a) => a.arguments.quantity as number);
      const q = Math.min(Math.max(...quantities), Math.max(Math.min(...quantities), Math.round(meanDemand(demand))));
      return legalActionWhere(view, 'order-mean', (a) => a.arguments.quantity === q, `ordering ${q}`);
    },
  },
};
