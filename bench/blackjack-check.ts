/**
 * Monte-Carlo check of the blackjack env against the exact DP: plays N episodes per policy and
 * rule variant through the env's public interface and prints the mean return with its 95 % interval
 * next to the DP's exact value, and the best policy that ignores the dealer's card (a threshold on
 * the hard total and one on the soft total, searched exactly). Usage: npx tsx bench/blackjack-check.ts [episodes=200000]
 */
import { Rng } from '../src/core/random.ts';
import { meanCi } from '../src/core/stats.ts';
import type { Action, DecisionRule, DecisionView } from '../src/envs/env.ts';
import { BlackjackEnv } from '../src/envs/blackjack/env.ts';
import { evaluateBlackjackRule, solveBlackjack } from '../src/envs/blackjack/solver.ts';
import type { BlackjackRules } from '../src/envs/blackjack/rules.ts';

const episodes = Number(process.argv[2] ?? 200_000);
if (!Number.isInteger(episodes) || episodes < 1) throw new Error(`episodes must be a positive integer, got ${process.argv[2]}`);

const move = (name: string): Action => ({ name, arguments: {} });
const threshold = (hard: number, soft: number): DecisionRule => (view) => {
  const { playerSum, usableAce } = view.state() as { playerSum: number; usableAce: boolean };
  return [{ action: move(playerSum >= (usableAce ? soft : hard) ? 'stick' : 'hit'), p: 1 }];
};

/** The dealer-blind thresholds with the highest exact return. */
function bestDealerBlind(rules: BlackjackRules): { hard: number; soft: number; expectedReturn: number } {
  let best = { hard: 0, soft: 0, expectedReturn: -Infinity };
  for (let hard = 12; hard <= 18; hard++) {
    for (let soft = 17; soft <= 20; soft++) {
      const { expectedReturn } = evaluateBlackjackRule(rules, threshold(hard, soft));
      if (expectedReturn > best.expectedReturn) best = { hard, soft, expectedReturn };
    }
  }
  return best;
}

const policies: Record<string, DecisionRule> = {
  random: (view) => view.legalActions().map((action) => ({ action, p: 0.5 })),
  'stick>=17': (view) => [{ action: move((view.state().playerSum as number) >= 17 ? 'stick' : 'hit'), p: 1 }],
  'always-stick': () => [{ action: move('stick'), p: 1 }],
  optimal: (view) => [{ action: view.oracle!().action, p: 1 }],
};

function sample(rule: DecisionRule, view: DecisionView, rng: Rng): Action {
  const dist = rule(view);
  return dist[rng.categorical(dist.map((d) => d.p))].action;
}

const variants: [string, BlackjackRules][] = [
  ['default', { natural: false, sab: false }],
  ['natural', { natural: true, sab: false }],
  ['sab', { natural: false, sab: true }],
];

for (const [variantName, rules] of variants) {
  console.log(`\n${variantName} rules: optimal return (DP) ${solveBlackjack(rules).optimal.expectedReturn.toFixed(6)}`);
  const blind = bestDealerBlind(rules);
  console.log(`  best dealer-blind rule: stick on hard ${blind.hard}+ and soft ${blind.soft}+, DP ${blind.expectedReturn.toFixed(5)}`);
  for (const [policyName, rule] of Object.entries(policies)) {
    const exact = evaluateBlackjackRule(rules, rule);
    const env = new BlackjackEnv(rules);
    const returns = new Float64Array(episodes);
    let wins = 0;
    const t0 = performance.now();
    for (let seed = 0; seed < episodes; seed++) {
      const policyRng = new Rng(seed, 99);
      env.reset(seed);
      let ret = 0;
      for (;;) {
        const step = env.step(sample(rule, env, policyRng));
        ret += step.reward;
        if (step.done) {
          if (step.info?.outcome === 'win') wins++;
          break;
        }
      }
      returns[seed] = ret;
    }
    const mc = meanCi(returns);
    const inside = exact.expectedReturn >= mc.ci95[0] && exact.expectedReturn <= mc.ci95[1];
    console.log(
      `  ${policyName.padEnd(13)} DP ${exact.expectedReturn.toFixed(5)} (win ${(100 * exact.win).toFixed(2)}%)` +
        `  MC ${mc.mean.toFixed(5)} ± ${((mc.ci95[1] - mc.ci95[0]) / 2).toFixed(5)} (win ${((100 * wins) / episodes).toFixed(2)}%)` +
        `  ${inside ? 'DP inside 95% CI' : 'DP OUTSIDE 95% CI'}  ${((performance.now() - t0) / 1000).toFixed(1)}s`,
    );
  }
}
