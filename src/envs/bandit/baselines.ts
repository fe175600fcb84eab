/** The bandit's simple baselines: the arm that has paid best so far, by its share or its posterior mean. */
import { argmax, legalActionWhere } from '../baseline-rules.ts';
import type { DecisionView, EnvBaseline } from '../env.ts';

function counts(view: DecisionView): { pulls: number[]; successes: number[] } {
  return view.state() as { pulls: number[]; successes: number[] };
}

export const banditBaselines: Record<string, EnvBaseline> = {
  greedy: {
    description: 'pull an arm not yet tried (the lowest-numbered), else the arm with the highest share of payouts so far',
    choose(view) {
      const { pulls, successes } = counts(view);
      const untried = pulls.indexOf(0);
      const arm = untried !== -1 ? untried : argmax(successes.map((s, i) => s / pulls[i]));
      return legalActionWhere(view, 'greedy', (a) => a.arguments.arm === arm + 1, `pulling arm ${arm + 1}`);
    },
  },
  // Greedy in what actionRewards() scores: the optimum of the dense estimator's per-decision objective.
  'posterior-mean': {
    description: 'pull the arm with the highest posterior mean payout (s + 1) / (n + 2) so far (the lowest-numbered of equals): the myopic optimum',
    choose(view) {
      const { pulls, successes } = counts(view);
      const arm = argmax(successes.map((s, i) => (s + 1) / (pulls[i] + 2)));
      return legalActionWhere(view, 'posterior-mean', (a) => a.arguments.arm === arm + 1, `pulling arm ${arm + 1}`);
    },
  },
};
