/** Kelly's simple baseline: never stake anything (log growth 0: what a bet must beat). */
import { legalActionWhere } from '../baseline-rules.ts';
import type { EnvBaseline } from '../env.ts';

export const kellyBaselines: Record<string, EnvBaseline> = {
  'no-bet': {
    description: 'stake nothing every turn (the bankroll stays as it is: log growth 0)',
    choose: (view) => legalActionWhere(view, 'no-bet', (a) => a.arguments.fraction === 0, 'staking 0'),
  },
};
