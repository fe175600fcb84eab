/** The Env contract every environment (built-in or a user's module) satisfies. */
import type { z } from 'zod';
import type { ToolCall, ToolSpec } from '../core/messages.ts';
import type { RewardParts } from '../core/trajectory.ts';
import type { RewardConfig } from '../rewards/reward.ts';

/**
 * `outcome`: the reward of a decision is only known by playing on (apply the episode's return).
 * `dense`: the env can score every legal action of a decision exactly (`actionRewards()`).
 */
export type EnvKind = 'outcome' | 'dense';

/** An action is a tool call without its id. */
export type Action = Omit<ToolCall, 'id'>;

export interface EnvReset {
  /** The first observation, rendered as text for an LLM. */
  observation: string;
  /** The tools offered: the legal actions' schema plus any informational tools. */
  tools: ToolSpec[];
  info?: Record<string, unknown>;
}

export interface EnvStep {
  observation: string;
  /** Total reward of this step; equals the sum of `rewardParts` when parts are given. */
  reward: number;
  rewardParts?: RewardParts;
  done: boolean;
  truncated: boolean;
  /**
   * `info.outcome` ('win' | 'loss' | 'draw') classifies the episode; otherwise the return's sign does.
   * `info.metrics` (name → number) are the env's own episode metrics (e.g. bandit regret), averaged per policy by evaluations.
   */
  info?: Record<string, unknown>;
}

export interface ActionValue {
  action: Action;
  /**
   * The exact expected reward of taking this action now, from the env's own dynamics, given what the
   * agent has seen: hidden state is averaged over (hmm's posterior over its states, the bandit's
   * posterior mean), which keeps the expectation and drops noise the agent could not act on.
   */
  expectedReward: number;
}

export interface OracleAdvice {
  /** The optimal action at this state. */
  action: Action;
  /** Forecast targets at this state (probabilities, quantiles), by name. */
  forecasts?: Record<string, number>;
}

/**
 * A report question: beside its action, the agent may be asked for a forecast that is scored with a
 * proper scoring rule (src/rewards/forecast-*.ts). The agent answers in the same action tool call,
 * as an extra argument named `name` (one call per decision: the parser checks and records it whole).
 * - `probability`: a number in [0, 1]; the outcome is 0 or 1.
 * - `quantile`: the `level`-quantile of a quantity that falls in `range`; the outcome is its value.
 * - `choice`: a probability per option (an object option → p summing to 1); the outcome is one option.
 * The oracle's target is `oracle().forecasts[name]`, for a choice `forecasts[`${name}_${option}`]`.
 */
export type ReportQuestion =
  | { name: string; kind: 'probability'; text: string }
  | { name: string; kind: 'quantile'; level: number; range: [number, number]; text: string }
  | { name: string; kind: 'choice'; options: string[]; text: string };

/** An answer or target: a number (probability, quantile), or a probability per option (choice). */
export type ReportValue = number | Record<string, number>;

/** A realised outcome: 0 | 1 (probability), the value (quantile), or the option that happened (choice). */
export type ReportOutcome = number | string;

/** The step info key under which an env with report questions records a `ReportRecord`. */
export const REPORT_INFO_KEY = 'report';

/** What a step records about the decision it resolved (in `EnvStep.info.report`). */
export interface ReportRecord {
  questions: ReportQuestion[];
  /** The oracle's answer at the decision, before the step. */
  targets: Record<string, ReportValue>;
  /** What happened, after the step. */
  outcomes: Record<string, ReportOutcome>;
}

/** What happens when the agent's answer is not a legal action. */
export interface InvalidActionRule {
  /** `end`: the episode ends with `penalty`; `retry`: the agent gets an error message and tries again. */
  mode: 'end' | 'retry';
  penalty: number;
  /** With `retry`: attempts per decision before the episode ends with `penalty`. */
  maxRetries: number;
}

/** The read-only view of a decision that scripted policies and exact evaluators use. */
export interface DecisionView {
  legalActions(): Action[];
  /** The visible state as plain data (e.g. blackjack: playerSum, dealerCard, usableAce). */
  state(): Record<string, unknown>;
  oracle?(): OracleAdvice;
  actionRewards?(): ActionValue[];
  /** The report questions asked at this decision (answered as extra arguments of the action call); none when absent. */
  reportQuestions?(): ReportQuestion[];
}

export interface Env extends DecisionView {
  readonly kind: EnvKind;
  readonly invalidAction: InvalidActionRule;
  /** Episode length cap the env itself imposes (the agent loop also has its own max turns). */
  readonly maxTurns?: number;
  /** Deterministic under the seed. */
  reset(seed: number): EnvReset | Promise<EnvReset>;
  step(action: Action): EnvStep | Promise<EnvStep>;
  /** Why `action` is not legal now, or null when it is. Checked before `step`. */
  validate(action: Action): string | null;
  /** Answers an informational tool call without ending the decision. */
  inform?(call: Action): string | Promise<string>;
}

/** A probability distribution over actions. */
export type ActionDistribution = { action: Action; p: number }[];

/** A decision rule: what a policy does at a state. Exact evaluators enumerate states and ask it. */
export type DecisionRule = (view: DecisionView) => ActionDistribution;

/**
 * A simple rule to compare a trained policy with (`--policy NAME`, and `spindle train`'s final
 * evaluation): a deterministic choice from what the decision shows (DecisionView.state and its
 * legal actions), never from hidden information, e.g. the newsvendor's order of the mean demand.
 */
export interface EnvBaseline {
  /** One line: what the rule does. */
  description: string;
  choose(view: DecisionView): Action;
}

/** How an env is registered: its name, options schema and factory, and what it can compute exactly. */
export interface EnvSpec<O extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  /** One line for `spindle envs`. */
  description: string;
  kind: EnvKind;
  /** Validates `--env-opt key=value` options (values arrive parsed as JSON scalars where they look like one). */
  options: z.ZodType<O>;
  create(options: O): Env;
  /** The system prompt's description of the task (tools are described by the agent loop). */
  instructions(options: O): string;
  /** Reward functions over the turn text and the composite's weights (e.g. market's format and reasoning parts). */
  rewards?(options: O): RewardConfig;
  /** Simple named rules beside `random` and `oracle` (lowercase names with - and digits). */
  baselines?: Record<string, EnvBaseline>;
  /** Exact expected returns, where the env can compute them. */
  exact?: {
    optimalReturn?(options: O): number;
    policyReturn?(options: O, rule: DecisionRule): number;
  };
  /**
   * `spindle train`'s settings for this env where its defaults (made for Blackjack's short
   * episodes) do not suit it: a partial train config (the same fields as `--config`), under the
   * user's config file and flags, which win field by field. E.g. a 10-turn env needs
   * `{ update: { rowLength: null } }` (rows measured from its episodes) and fewer episodes a step.
   * A function gets the run's env options (a preset that suits `report=true` differently).
   */
  train?: Record<string, unknown> | ((options: O) => Record<string, unknown>);
}

/** The train preset of `spec` for these options ({} when it has none). */
export function trainPresetOf<O extends Record<string, unknown>>(spec: EnvSpec<O>, options: O): Record<string, unknown> {
  const preset = spec.train;
  if (preset === undefined) return {};
  return typeof preset === 'function' ? preset(options) : preset;
}
