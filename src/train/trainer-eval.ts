/**
 * The evaluation every N steps: the current policy plays held-out seeds greedily (temperature 0),
 * and where the env has an exact value for an LLM policy (Blackjack: its greedy table, every state
 * asked as an episode's first decision) that value too. Logged as `eval/*` metrics.
 */
import type { EnvSpec } from '../envs/env.ts';
import type { BlackjackOptions } from '../envs/blackjack/options.ts';
import { blackjackSpec } from '../envs/blackjack/spec.ts';
import type { Policy } from '../policy/policy.ts';
import { runRollouts } from '../rollout/rollouts.ts';
import { assertSomeFinished, type RolloutSummary } from '../rollout/summary.ts';
import { blackjackGreedyTable } from './greedy-table.ts';
import { evalSeeds } from './trainer-seeds.ts';

export interface PeriodicEval {
  meanReturn: number;
  ci95: [number, number];
  winRate: number;
  invalidRate: number;
  meanTurns: number;
  /** The exact expected return of the greedy policy, or null when the env has none for an LLM. */
  exactReturn: number | null;
  /** Share of the greedy table's states answered invalidly (null without a table). */
  tableInvalidRate: number | null;
  seconds: number;
}

export interface PeriodicEvalRequest<O extends Record<string, unknown>> {
  spec: EnvSpec<O>;
  options: O;
  policy: Policy;
  episodes: number;
  maxTurns: number;
  maxTokens: number;
  concurrency: number;
}

/** The exact value of an LLM policy's greedy play, where the env can compute one (Blackjack). */
export async function exactGreedyValue<O extends Record<string, unknown>>(
  spec: EnvSpec<O>,
  options: O,
  policy: Policy,
  maxTokens: number,
): Promise<{ exactReturn: number; invalidRate: number } | null> {
  if (spec.name !== blackjackSpec.name || spec.exact !== blackjackSpec.exact) return null;
  const table = await blackjackGreedyTable(policy, options as unknown as BlackjackOptions, { maxTokens });
  return { exactReturn: table.exactReturn, invalidRate: table.invalidRate };
}

/** The policy's greedy episodes on `seeds`; `what` names them in the error when none finished. */
export async function greedySummary<O extends Record<string, unknown>>(
  request: Omit<PeriodicEvalRequest<O>, 'episodes'>,
  seeds: number[],
  what: string,
): Promise<RolloutSummary> {
  const { summary } = await runRollouts({
    spec: request.spec,
    options: request.options,
    policy: request.policy,
    seeds,
    concurrency: request.concurrency,
    episode: { maxTurns: request.maxTurns, maxTokens: request.maxTokens, temperature: 0 },
    keepTrajectories: false,
  });
  assertSomeFinished(summary, what);
  return summary;
}

export async function periodicEval<O extends Record<string, unknown>>(request: PeriodicEvalRequest<O>): Promise<PeriodicEval> {
  const start = performance.now();
  const summary = await greedySummary(request, evalSeeds(request.episodes), 'evaluation on held-out seeds');
  const exact = await exactGreedyValue(request.spec, request.options, request.policy, request.maxTokens);
  return {
    meanReturn: summary.meanReturn.mean,
    ci95: summary.meanReturn.ci95,
    winRate: summary.winRate,
    invalidRate: summary.invalidActionRate,
    meanTurns: summary.meanTurns,
    exactReturn: exact?.exactReturn ?? null,
    tableInvalidRate: exact?.invalidRate ?? null,
    seconds: (performance.now() - start) / 1000,
  };
}

export function evalMetrics(e: PeriodicEval): Record<string, number> {
  const out: Record<string, number> = {
    'eval/mean_return': e.meanReturn,
    'eval/ci95_low': e.ci95[0],
    'eval/ci95_high': e.ci95[1],
    'eval/win_rate': e.winRate,
    'eval/invalid_rate': e.invalidRate,
    'eval/episode_length': e.meanTurns,
    'time/eval_s': e.seconds,
  };
  if (e.exactReturn !== null) out['eval/exact_return'] = e.exactReturn;
  if (e.tableInvalidRate !== null) out['eval/table_invalid_rate'] = e.tableInvalidRate;
  return out;
}
