/**
 * The reward config of a run under its report mode (train config `report.mode`). With `supervised`
 * the report answers are learned from the oracle's targets by likelihood, so the `forecast` part
 * (scored against those same targets by default) must not also drive the RL advantage: through the
 * turn's reward it would credit the action's tokens for how close the report came to the oracle. It
 * keeps being scored and recorded (weight 0), so `reward/forecast` and calibration stay visible.
 */
import { FORECAST_PART } from './forecast-reward.ts';
import type { RewardConfig } from './reward.ts';

export type ReportMode = 'reward' | 'supervised';

export function rewardsForReportMode(rewards: RewardConfig | undefined, mode: ReportMode): RewardConfig | undefined {
  if (mode === 'reward' || !rewards) return rewards;
  return { ...rewards, weights: { ...rewards.weights, [FORECAST_PART]: 0 } };
}
