/**
 * The second control (the tabular one, tabular-blackjack, keeps the rewards and swaps the model):
 * the default model, warm start and trainer of `spindle train --env blackjack`, trained on every
 * decision's exact action values instead of the hand's outcome. Blackjack is shown to the trainer
 * as a dense env whose `actionRewards()` are the solver's values of hitting and sticking (under
 * optimal play after), so each decision's sampled answers are compared without the cards' luck
 * (`advantage.estimator` 'dense'). What it measures: whether the model can read the state and learn
 * the optimal table at all, apart from the noise of the outcome reward. A diagnostic only: a real
 * run never sees these values (Blackjack is an outcome env).
 * Prints the exact return of the handed-over policy's greedy table and the states it gets wrong.
 * usage: npm run bench -- blackjack-exact-values [--json] [--seed 0] [--steps 120] [--threads N]
 */
import type { Action, ActionValue, Env, EnvSpec } from '../src/envs/env.ts';
import { moveAction } from '../src/envs/blackjack/actions.ts';
import type { BlackjackOptions } from '../src/envs/blackjack/options.ts';
import { blackjackSpec } from '../src/envs/blackjack/spec.ts';
import { solveBlackjack } from '../src/envs/blackjack/solver.ts';
import { blackjackStrategyChart } from '../src/eval/blackjack-strategy-chart.ts';
import { blackjackGreedyTable } from '../src/train/greedy-table.ts';
import { parseTrainConfig } from '../src/train/train-config.ts';
import { flag } from './flags.ts';
import { tempTrainRun } from './temp-train-run.ts';
import type { BenchFigures } from './run.ts';

/** Blackjack as a dense env: the same deals and text, each decision scored by the oracle's action values. */
function exactValueEnv(inner: Env): Env {
  return {
    kind: 'dense',
    invalidAction: inner.invalidAction,
    reset: (seed) => inner.reset(seed),
    step: (action: Action) => inner.step(action),
    validate: (action: Action) => inner.validate(action),
    legalActions: () => inner.legalActions(),
    state: () => inner.state(),
    oracle: () => inner.oracle!(),
    actionRewards: (): ActionValue[] => {
      const values = inner.oracle!().forecasts as { stickValue: number; hitValue: number };
      return [
        { action: moveAction('stick'), expectedReward: values.stickValue },
        { action: moveAction('hit'), expectedReward: values.hitValue },
      ];
    },
  };
}

function nonNegativeInt(text: string, name: string): number {
  const v = Number(text);
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`--${name} must be a non-negative integer, got ${text}`);
  return v;
}

export async function run(args: string[], log: (line: string) => void): Promise<BenchFigures> {
  const seed = nonNegativeInt(flag(args, 'seed', '0'), 'seed');
  const steps = nonNegativeInt(flag(args, 'steps', '120'), 'steps');
  const threadsFlag = flag(args, 'threads', '');
  // Same name and exact values as Blackjack, so the trainer's evaluations report the greedy table.
  const spec: EnvSpec<BlackjackOptions> = { ...blackjackSpec, kind: 'dense', create: (o) => exactValueEnv(blackjackSpec.create(o)) };
  const options = blackjackSpec.options.parse({});
  const settings = parseTrainConfig({
    steps,
    seed,
    // One episode per seed, four answers at each decision compared by their exact values.
    groupSize: 1,
    batchSeeds: 64,
    episode: { decisionSamples: 4 },
    advantage: { estimator: 'dense' },
    evalEvery: Math.max(1, Math.ceil(steps / 4)),
    checkpointEvery: steps || 1,
    ...(threadsFlag ? { threads: nonNegativeInt(threadsFlag, 'threads') } : {}),
  });
  const { outcome, store, threads, seconds } = await tempTrainRun(spec, options, settings, 'spindle-bench-exact-', (e) => {
    if (e.type === 'eval') log(`eval at step ${e.step}: exact ${e.eval.exactReturn?.toFixed(4) ?? '?'}`);
  });
  const table = await blackjackGreedyTable(outcome.policy, options, { maxTokens: outcome.maxTokens });
  await outcome.policy.close();
  await store.close();

  const optimal = solveBlackjack(options);
  const wrong = blackjackStrategyChart(table.moves, options).differences;
  log(
    `seed ${seed}, ${steps} steps (${outcome.episodes} episodes): greedy table exact ${table.exactReturn.toFixed(4)} ` +
      `(optimum ${optimal.optimal.expectedReturn.toFixed(4)}), ${wrong.length} of ${table.states} states off the optimal move, ` +
      `${table.invalidStates} invalid; ${seconds.toFixed(0)} s, threads ${threads}`,
  );
  if (wrong.length > 0) log(`off: ${wrong.map((d) => `${d.key} ${d.chosen} (−${d.cost.toFixed(3)})`).join(', ')}`);
  return {
    seed,
    steps,
    episodes: outcome.episodes,
    threads,
    exactReturn: table.exactReturn,
    optimalReturn: optimal.optimal.expectedReturn,
    gap: optimal.optimal.expectedReturn - table.exactReturn,
    statesOff: wrong.length,
    invalidStates: table.invalidStates,
    warmStartSeconds: outcome.warmStart?.seconds ?? 0,
    wallSeconds: seconds,
  };
}
