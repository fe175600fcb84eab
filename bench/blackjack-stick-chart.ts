/**
 * How sure a Blackjack policy is, state by state: the share of sticks among --samples answers
 * sampled at temperature 1 at every hard 11–17 first decision (the greedy table, which report.md
 * charts, shows only each state's likelier move). The summary figures are the mean stick share on
 * hard 12–16 against a dealer's 2–6 (optimal: stick, but hit on 12 against 2–3) and against 7–A
 * (optimal: hit): their difference is how much the policy reads the dealer's card.
 * usage: npm run bench -- blackjack-stick-chart --policy run:RUN[@STEP] [--db FILE] [--samples 200] [--json]
 */
import { blackjackSpec } from '../src/envs/blackjack/spec.ts';
import { initEngine } from '../src/model/engine.ts';
import '../src/policy/embedded-register.ts';
import { resolvePolicy } from '../src/policy/resolve.ts';
import '../src/policy/run-checkpoint-register.ts';
import { judgeAnswer, tableStateMessages } from '../src/train/greedy-table.ts';
import { blackjackTableStates } from '../src/train/greedy-table-states.ts';
import { flag, positiveIntFlag } from './flags.ts';
import type { BenchFigures } from './run.ts';

const DEALER_CARDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const SUMS = [11, 12, 13, 14, 15, 16, 17];

export async function run(args: string[], log: (line: string) => void): Promise<BenchFigures> {
  const name = flag(args, 'policy', '');
  if (!name) throw new Error('--policy is required (e.g. run:RUN or model:DIR)');
  const db = flag(args, 'db', '') || undefined;
  const samples = positiveIntFlag(args, 'samples', 200);
  await initEngine({ threads: 1 });
  const options = blackjackSpec.options.parse({});
  const policy = await resolvePolicy(name, { spec: blackjackSpec, options, db });
  const instructions = blackjackSpec.instructions(options);
  const states = blackjackTableStates(options).filter((s) => s.hits === 0 && !s.state.usableAce && SUMS.includes(s.state.playerSum));
  const share = new Map<string, number>();
  const maxTokens = policy.answerBudget ?? 32;
  await Promise.all(
    states.map(async (s, i) => {
      // A seed per state, so the states do not share their random draws.
      const answers = await policy.complete({ messages: tableStateMessages(instructions, s), tools: s.tools, maxTokens, temperature: 1, n: samples, seed: 1000 + i });
      const sticks = answers.filter((c) => judgeAnswer(c, s).move === 'stick').length;
      share.set(`${s.state.playerSum}/${s.state.dealerCard}`, sticks / samples);
    }),
  );
  await policy.close?.();

  log(`${name}: share of sticks among ${samples} sampled answers, hard hands (rows) against the dealer's card (columns)`);
  log(`hand ${DEALER_CARDS.map((c) => (c === 1 ? 'A' : String(c)).padStart(5)).join('')}`);
  for (const sum of SUMS) log(`${String(sum).padStart(4)} ${DEALER_CARDS.map((c) => share.get(`${sum}/${c}`)!.toFixed(2).padStart(5)).join('')}`);
  const mean = (cards: number[]): number => {
    const xs = [12, 13, 14, 15, 16].flatMap((sum) => cards.map((c) => share.get(`${sum}/${c}`)!));
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  const weakDealer = mean([2, 3, 4, 5, 6]);
  const strongDealer = mean([7, 8, 9, 10, 1]);
  log(`hard 12–16: sticks ${weakDealer.toFixed(3)} against 2–6, ${strongDealer.toFixed(3)} against 7–A (difference ${(weakDealer - strongDealer).toFixed(3)})`);
  return {
    policy: name,
    samples,
    hard11Stick: DEALER_CARDS.reduce((a, c) => a + share.get(`11/${c}`)!, 0) / DEALER_CARDS.length,
    hard17Stick: DEALER_CARDS.reduce((a, c) => a + share.get(`17/${c}`)!, 0) / DEALER_CARDS.length,
    band12to16StickAgainst2to6: weakDealer,
    band12to16StickAgainst7toA: strongDealer,
    dealerDifference: weakDealer - strongDealer,
  };
}
