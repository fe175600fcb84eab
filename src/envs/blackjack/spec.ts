/** The `blackjack` env's registration: options, factory, prompt and exact values. */
import type { EnvSpec } from '../env.ts';
import { blackjackTrainPreset } from '../train-presets.ts';
import { BlackjackEnv } from './env.ts';
import { blackjackOptionsSchema, type BlackjackOptions } from './options.ts';
import { evaluateBlackjackRule, solveBlackjack } from './solver.ts';

function payoutRule(options: BlackjackOptions): string {
  if (options.sab) return ' An ace with a ten-card as your first two cards (a natural) wins +1 unless the dealer also has one.';
  if (options.natural) return ' A winning natural (ace with a ten-card as your first two cards) pays +1.5.';
  return '';
}

export const blackjackSpec: EnvSpec<BlackjackOptions> = {
  name: 'blackjack',
  description: 'Gymnasium Blackjack-v1 (infinite deck): hit or stick against a dealer who stands on 17.',
  kind: 'outcome',
  options: blackjackOptionsSchema,
  create: (options) => new BlackjackEnv(options),
  instructions: (options) =>
    'You play blackjack against a dealer. Cards 2-10 count their number, J/Q/K count 10, an ace counts 11 ' +
    'unless that would take you over 21, then 1. Each turn call hit to take a card or stick to stop. ' +
    'Going over 21 loses at once. After you stick, the dealer draws until it has 17 or more; ' +
    'the hand closer to 21 wins. Win +1, loss -1, draw 0.' +
    payoutRule(options),
  train: blackjackTrainPreset,
  exact: {
    optimalReturn: (options) => solveBlackjack(options).optimal.expectedReturn,
    policyReturn: (options, rule) => evaluateBlackjackRule(options, rule).expectedReturn,
  },
};
