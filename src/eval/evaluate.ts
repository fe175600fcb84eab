/**
 * Evaluation of several policies on the same seeds: each plays one episode per seed; the report gives
 * each policy's mean return with its 95 % interval, outcome rates, invalid-answer rate and exact value
 * where the env has one (scripted policies: their action distribution through spec.exact.policyReturn;
 * LLM policies on Blackjack: their greedy table), the means of the env's own episode metrics, the
 * normalised score (random = 0, oracle = 1) when both were played, the oracle's value, and the
 * head-to-head rate of every ordered pair. Policies are played one after the other, so an LLM policy
 * has the engine to itself.
 */
import type { z } from 'zod';
import type { Trajectory } from '../core/trajectory.ts';
import { withAnswerBudget, type episodeSettingsSchema } from '../agent/episode-settings.ts';
import { exactValues } from './exact-values.ts';
import { CalibrationTally, type QuestionCalibration } from './calibration.ts';
import { EnvMetricTally, type EnvMetricsReport } from './env-metrics.ts';
import { normalisedScore, type NormalisedScore } from './normalised-score.ts';
import type { EnvSpec } from '../envs/env.ts';
import type { BlackjackOptions } from '../envs/blackjack/options.ts';
import { blackjackSpec } from '../envs/blackjack/spec.ts';
import type { Policy } from '../policy/policy.ts';
import { runRollouts } from '../rollout/rollouts.ts';
import type { RolloutSummary } from '../rollout/summary.ts';
import { blackjackGreedyTable, type GreedyTable } from '../train/greedy-table.ts';
import { greedyAgreement, type GreedyAgreement } from './greedy-agreement.ts';
import { headToHeadMatrix, type HeadToHead } from './head-to-head.ts';

type EpisodeSettings = z.output<typeof episodeSettingsSchema>;

export interface EvalRequest {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec: EnvSpec<any>;
  /** Validated env options. */
  options: Record<string, unknown>;
  /** Distinct names; played in this order. */
  policies: Policy[];
  /** One episode per seed for every policy. */
  seeds: number[];
  /** Resolved episode settings; temperature 0 is greedy decoding. */
  episode: EpisodeSettings;
  /** Each policy with an answer budget of its own (Policy.answerBudget) plays with it as maxTokens (the CLI without --max-tokens). */
  answerBudgets?: boolean;
  /** Episodes in flight at once (default 64). */
  concurrency?: number;
  runId?: string | null;
  onTrajectory?: (trajectory: Trajectory) => void | Promise<void>;
  onPolicyStart?: (policy: string, episodes: number) => void;
  onEpisode?: (policy: string, done: number, meanReturn: number) => void;
  onPolicyEnd?: (policy: string) => void;
}

/** The greedy table's exact figures (without its per-state entries) and whether sampled play agrees with it. */
export type GreedyTableReport = Omit<GreedyTable, 'entries'> & { agreement: GreedyAgreement };

export interface PolicyEval {
  policy: string;
  episodes: number;
  finished: number;
  failed: number;
  truncated: number;
  failureReasons: Record<string, number>;
  meanReturn: number;
  ci95: [number, number];
  std: number;
  winRate: number;
  drawRate: number;
  lossRate: number;
  /** Invalid answers per LLM call. */
  invalidRate: number;
  /** Share of scored episodes that ended on an invalid answer. */
  invalidEndingRate: number;
  meanTurns: number;
  /** The policy's exact expected return as played, or null when the env cannot compute it (an LLM sampled above temperature 0). */
  exactReturn: number | null;
  exactSource: 'distribution' | 'greedy-table' | null;
  /** For an LLM policy on Blackjack. */
  greedyTable: GreedyTableReport | null;
  /** Calibration of the policy's report answers, per question; absent when the env asked none. */
  calibration?: QuestionCalibration[];
  /** Means of the env's own episode metrics (`info.metrics`, e.g. bandit regret) over the episodes that reported them. */
  metrics: Record<string, number>;
  /** (policy − random) / (oracle − random); null unless both random and oracle were evaluated. */
  normalisedScore: NormalisedScore | null;
  notes: string[];
}

export interface EvalReport {
  env: string;
  envOptions: Record<string, unknown>;
  episodes: number;
  firstSeed: number;
  temperature: number;
  /** The oracle's exact expected return, or null. */
  optimalReturn: number | null;
  policies: PolicyEval[];
  /** headToHead[a][b]: share of seeds where a's return beat b's (ties half); null when no seed compared. */
  headToHead: Record<string, Record<string, number | null>>;
  /** The counts behind each rate. */
  headToHeadCounts: Record<string, Record<string, HeadToHead>>;
  notes: string[];
}

function policyEpisode(request: EvalRequest, policy: Policy): EpisodeSettings {
  return request.answerBudgets ? withAnswerBudget(request.episode, policy) : request.episode;
}

/** One policy's episodes: its summary and its return on each seed (NaN where the episode failed). */
async function playPolicy(
  request: EvalRequest,
  policy: Policy,
): Promise<{ summary: RolloutSummary; returns: Float64Array; calibration: QuestionCalibration[]; envMetrics: EnvMetricsReport }> {
  const { seeds } = request;
  const returns = new Float64Array(seeds.length).fill(NaN);
  let done = 0;
  let scored = 0;
  let sum = 0;
  const calibration = new CalibrationTally();
  const envMetrics = new EnvMetricTally();
  request.onPolicyStart?.(policy.name, seeds.length);
  const result = await runRollouts({
    spec: request.spec,
    options: request.options,
    policy,
    seeds,
    concurrency: request.concurrency ?? 64,
    episode: policyEpisode(request, policy),
    runId: request.runId ?? null,
    keepTrajectories: false,
    onEvent: (event) => {
      if (event.type !== 'episode_finished') return;
      const t = event.trajectory;
      done++;
      calibration.add(t);
      envMetrics.add(t);
      if (t.status !== 'failed') {
        returns[event.seedIndex] = t.reward;
        scored++;
        sum += t.reward;
      }
      request.onEpisode?.(policy.name, done, scored > 0 ? sum / scored : NaN);
    },
    onTrajectory: request.onTrajectory,
  });
  request.onPolicyEnd?.(policy.name);
  return { summary: result.summary, returns, calibration: calibration.report(), envMetrics: envMetrics.report() };
}

/** The greedy table of an LLM policy on Blackjack, compared with its sampled episodes. */
async function greedyTableReport(request: EvalRequest, policy: Policy, summary: RolloutSummary): Promise<GreedyTableReport> {
  const table = await blackjackGreedyTable(policy, request.options as BlackjackOptions, { maxTokens: policyEpisode(request, policy).maxTokens, stop: request.episode.stop });
  const { entries: _entries, ...figures } = table;
  return { ...figures, agreement: greedyAgreement(table.exactReturn, summary.meanReturn, request.episode.temperature) };
}

async function evaluatePolicy(request: EvalRequest, policy: Policy): Promise<{ result: PolicyEval; returns: Float64Array }> {
  const { summary, returns, calibration, envMetrics } = await playPolicy(request, policy);
  const exact = exactValues(request.spec, request.options, policy);
  const notes = [...exact.notes];
  let greedyTable: GreedyTableReport | null = null;
  // An LLM policy (no action distribution of its own) on Blackjack: its exact value is its greedy table.
  if (request.spec === blackjackSpec && !policy.distribution) {
    try {
      greedyTable = await greedyTableReport(request, policy, summary);
    } catch (error) {
      notes.push(`greedy table: ${(error as Error).message}`);
    }
  }
  const scored = summary.episodes.finished - summary.episodes.failed;
  // The greedy table is the exact value of the policy as played only when it was played greedily.
  const greedy = request.episode.temperature === 0 ? greedyTable : null;
  if (greedyTable && !greedy) notes.push(`exact return n/a: sampled at temperature ${request.episode.temperature}; the greedy table (temperature 0) is worth ${greedyTable.exactReturn.toFixed(4)}`);
  const exactReturn = exact.exactReturn ?? greedy?.exactReturn ?? null;
  for (const [name, count] of Object.entries(envMetrics.counts)) {
    if (count < scored) notes.push(`env metric ${name}: reported by ${count} of ${scored} scored episodes (its mean is over those)`);
  }
  const result: PolicyEval = {
    policy: policy.name,
    episodes: request.seeds.length,
    finished: summary.episodes.finished,
    failed: summary.episodes.failed,
    truncated: summary.episodes.truncated,
    failureReasons: summary.failureReasons,
    meanReturn: summary.meanReturn.mean,
    ci95: summary.meanReturn.ci95,
    std: summary.meanReturn.std,
    winRate: summary.winRate,
    drawRate: summary.drawRate,
    lossRate: summary.lossRate,
    invalidRate: summary.invalidActionRate,
    invalidEndingRate: scored > 0 ? summary.invalidEndings / scored : NaN,
    meanTurns: summary.meanTurns,
    exactReturn,
    exactSource: exact.exactReturn !== null ? 'distribution' : greedy ? 'greedy-table' : null,
    greedyTable,
    ...(calibration.length > 0 ? { calibration } : {}),
    metrics: envMetrics.means,
    normalisedScore: null, // set by evaluatePolicies
    notes,
  };
  return { result, returns };
}

export async function evaluatePolicies(request: EvalRequest): Promise<EvalReport> {
  const names = request.policies.map((p) => p.name);
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate !== undefined) throw new Error(`evaluatePolicies: policy '${duplicate}' is given twice`);
  if (request.seeds.length === 0) throw new Error('evaluatePolicies: no seeds');
  // Sorted copy rather than a Set: 8 bytes a seed, for evaluations of millions of episodes.
  const sorted = Float64Array.from(request.seeds).sort();
  if (sorted.some((seed, i) => i > 0 && seed === sorted[i - 1])) throw new Error('evaluatePolicies: the seeds must be distinct');
  const policies: PolicyEval[] = [];
  const returns: Record<string, Float64Array> = {};
  for (const policy of request.policies) {
    try {
      const evaluated = await evaluatePolicy(request, policy);
      policies.push(evaluated.result);
      returns[policy.name] = evaluated.returns;
    } finally {
      // Its cached prompts are of no use to the next policy, and six embedded models' caches left
      // 236 of 300 bandit episodes of the sixth failing at jax-js's 4 GiB.
      policy.clearCaches?.();
    }
  }
  const counts = headToHeadMatrix(returns);
  const headToHead = Object.fromEntries(Object.entries(counts).map(([a, row]) => [a, Object.fromEntries(Object.entries(row).map(([b, h]) => [b, h.rate]))]));
  const notes: string[] = [];
  const optimal = request.policies.length > 0 ? exactValues(request.spec, request.options, request.policies[0]) : null;
  if (optimal) notes.push(...optimal.notes.filter((n) => n.startsWith('optimal return')));
  const optimalReturn = optimal?.optimalReturn ?? null;
  return {
    env: request.spec.name,
    envOptions: request.options,
    episodes: request.seeds.length,
    firstSeed: request.seeds[0],
    temperature: request.episode.temperature,
    optimalReturn,
    // Scored once every policy has played: the score needs random's and the oracle's figures.
    policies: policies.map((p) => ({ ...p, normalisedScore: normalisedScore(policies, p.policy, optimalReturn) })),
    headToHead,
    headToHeadCounts: counts,
    notes,
  };
}
