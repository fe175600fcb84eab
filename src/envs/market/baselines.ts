/** The market's simple baseline: never trade (cash only: no pnl, no risk). */
import { legalActionWhere } from '../baseline-rules.ts';
import type { EnvBaseline } from '../env.ts';

export const marketBaselines: Record<string, EnvBaseline> = {
  'hold-cash': {
    description: 'wait every tick: keep the starting cash (pnl 0, risk 0)',
    choose: (view) => legalActionWhere(view, 'hold-cash', (a) => a.name === 'wait', 'waiting'),
  },
};
