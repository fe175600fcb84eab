/**
 * The report-question options an env can add to its own (strict) options schema, and the reward
 * config they ask for: `report=true` asks the env's questions and adds the `forecast` reward part.
 */
import { z } from 'zod';
import { FORECAST_PART, forecastReward } from '../rewards/forecast-reward.ts';
import type { RewardConfig } from '../rewards/reward.ts';

export const reportOptionsShape = {
  /** Ask the env's report questions beside the action (off by default: the env behaves as before). */
  report: z.boolean().default(false),
  /** Score answers against the oracle's target (lower variance, the default) or the realised outcome. */
  reportAgainst: z.enum(['oracle', 'outcome']).default('oracle'),
  /** Brier or log score for probabilities and choices (quantiles use pinball loss). */
  reportRule: z.enum(['brier', 'log']).default('brier'),
  /** Weight of the `forecast` part in the turn's reward. */
  reportWeight: z.number().min(0).max(100).default(1),
};

export interface ReportOptions {
  report: boolean;
  reportAgainst: 'oracle' | 'outcome';
  reportRule: 'brier' | 'log';
  reportWeight: number;
}

/** The `forecast` reward part when reports are on; nothing otherwise. */
export function reportRewards(o: ReportOptions): RewardConfig {
  if (!o.report) return { fns: [], weights: {} };
  return { fns: [forecastReward({ against: o.reportAgainst, rule: o.reportRule })], weights: { [FORECAST_PART]: o.reportWeight } };
}
