/** The bandit's simple baseline: play the arm that has paid best so far. */
import { argmax, legalActionWhere } from '../baseline-rules.ts';
import type { EnvBaseline } from '../env.ts';

export const banditBaselines: Record<string, EnvBaseline> = {
  greedy: {
    description: 'pull an arm not yet tried (the lowest-numbered), else the arm with the highest share of payouts so far',
    choose(view) {
      const { pulls, successes } = view.state() as { pulls: number[]; successes: number[] };
      const untried = pulls.indexOf(0);
      const arm = untried !== -1 ? untried : argmax(successes.map((s, i) => s / pulls[i]));
      return legalActionWhere(view, 'greedy', (a) => a.arguments.arm === arm + 1, `pulling arm ${arm + 1}`);
    },
  },
};
