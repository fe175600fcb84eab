/**
 * A Blackjack move table (a policy's greedy table) as the strategy chart players know: one row per
 * player hand (hard 4–21, soft 12–21), one column per dealer card, H or S in each cell, and the cells
 * where it differs from the optimal policy in bold, with what each difference costs at that state
 * (the optimal action's value minus the chosen one's, playing optimally afterwards). It shows at a
 * glance what RL has learned and what it has not, which an expected return alone does not.
 */
import type { BlackjackRules } from '../envs/blackjack/rules.ts';
import { blackjackStateKey, solveBlackjack } from '../envs/blackjack/solver.ts';
import type { TableMove } from '../train/greedy-table-value.ts';

export interface StrategyDifference {
  key: string;
  chosen: TableMove;
  optimal: 'hit' | 'stick';
  /** Value of the optimal action minus the chosen one's at this state (≥ 0; an invalid answer costs up to losing the hand). */
  cost: number;
}

export interface StrategyChart {
  markdown: string;
  states: number;
  differences: StrategyDifference[];
}

const DEALER_CARDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const HANDS: { usableAce: boolean; sums: number[] }[] = [
  { usableAce: false, sums: Array.from({ length: 18 }, (_, i) => 4 + i) },
  { usableAce: true, sums: Array.from({ length: 10 }, (_, i) => 12 + i) },
];

function letter(move: TableMove): string {
  return move === 'hit' ? 'H' : move === 'stick' ? 'S' : '×';
}

/** The chart of `moves` (by blackjackStateKey; a missing state is an error) against the optimal policy under `rules`. */
export function blackjackStrategyChart(moves: Readonly<Record<string, TableMove>>, rules: BlackjackRules, invalidPenalty = -1): StrategyChart {
  const solution = solveBlackjack(rules);
  const differences: StrategyDifference[] = [];
  const lines = ['| hand | ' + DEALER_CARDS.map((c) => (c === 1 ? 'A' : String(c))).join(' | ') + ' |', '|---|' + DEALER_CARDS.map(() => ':-:').join('|') + '|'];
  let states = 0;
  for (const { usableAce, sums } of HANDS) {
    for (const playerSum of sums) {
      const cells: string[] = [];
      for (const dealerCard of DEALER_CARDS) {
        const key = blackjackStateKey({ playerSum, dealerCard, usableAce });
        const chosen = moves[key];
        if (chosen === undefined) throw new RangeError(`strategy chart: the move table has no entry for ${key}`);
        states++;
        const values = solution.actionValues({ playerSum, usableAce, dealerCard, natural: false });
        const optimal = values.hit.expectedReturn > values.stick.expectedReturn ? 'hit' : 'stick';
        const best = values[optimal].expectedReturn;
        if (chosen === optimal) {
          cells.push(letter(chosen));
          continue;
        }
        const chosenValue = chosen === 'invalid' ? invalidPenalty : values[chosen].expectedReturn;
        differences.push({ key, chosen, optimal, cost: best - chosenValue });
        cells.push(`**${letter(chosen)}**`);
      }
      lines.push(`| ${usableAce ? 'soft' : 'hard'} ${playerSum} | ${cells.join(' | ')} |`);
    }
  }
  return { markdown: lines.join('\n'), states, differences };
}
