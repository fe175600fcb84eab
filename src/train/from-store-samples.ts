/**
 * Stored groups → training samples, the way an online step makes them (trainer-step.ts): the
 * selected trajectories (from-store-select.ts) grouped by task, advantages by the existing
 * estimators (zero-variance groups dropped and counted by default: they carry no signal; the
 * critic's table learned from the stored returns themselves), then
 * buildSamples on exactly the recorded ids and sampling logprobs.
 */
import { computeAdvantages, learnFromBatch, type AdvantageConfig, type AdvantageResult } from '../advantage/compute.ts';
import type { ActionValueTable } from '../advantage/critic.ts';
import { scoredGroupsFromTrajectories } from '../advantage/from-trajectories.ts';
import type { Trajectory } from '../core/trajectory.ts';
import type { Store } from '../store/store.ts';
import { selectStoredTrajectories, type SelectedTrajectories, type StoreSelection } from './from-store-select.ts';
import { buildSamples } from './samples.ts';
import type { SamplesConfig } from './samples-config.ts';
import type { SampleBatch } from './samples-types.ts';

/** GRPO per task; tied groups (equal rewards, or one trajectory) are dropped and counted. */
export const DEFAULT_OFFLINE_ADVANTAGE: AdvantageConfig = { estimator: 'grpo', dropZeroVariance: true };

export interface StoredSamples {
  selection: SelectedTrajectories;
  advantages: AdvantageResult;
  batch: SampleBatch;
  /** The trajectories the samples came from (those of the kept groups). */
  trajectories: Trajectory[];
}

export interface StoredSamplesOptions {
  advantage?: AdvantageConfig;
  samples?: SamplesConfig;
}

export function samplesFromTrajectories(selection: SelectedTrajectories, options: StoredSamplesOptions = {}): StoredSamples {
  const config = options.advantage ?? DEFAULT_OFFLINE_ADVANTAGE;
  const groups = scoredGroupsFromTrajectories(selection.trajectories);
  // Offline there are no earlier steps: the critic's table learns the stored returns, then judges them.
  const actionValues: ActionValueTable = new Map();
  learnFromBatch(groups, config, { actionValues });
  const advantages = computeAdvantages(groups, config, { actionValues });
  const batch = buildSamples(selection.trajectories, advantages.advantages, options.samples ?? {});
  const kept = new Set(advantages.advantages.map((a) => a.trajectoryId));
  return { selection, advantages, batch, trajectories: selection.trajectories.filter((t) => kept.has(t.id)) };
}

export async function samplesFromStore(store: Store, selection: StoreSelection, options: StoredSamplesOptions = {}): Promise<StoredSamples> {
  return samplesFromTrajectories(await selectStoredTrajectories(store, selection), options);
}

/** Selection and sample counts as flat metrics (`offline/skipped/<reason>`, ...). */
export function selectionMetrics(s: StoredSamples): Record<string, number> {
  const out: Record<string, number> = {
    'offline/trajectories_read': s.selection.read,
    'offline/trajectories_selected': s.selection.trajectories.length,
    'offline/trajectories_trained': s.trajectories.length,
  };
  for (const [reason, n] of Object.entries(s.selection.skipped)) out[`offline/skipped/${reason}`] = n;
  for (const [reason, n] of Object.entries(s.batch.stats.excluded)) out[`samples/excluded/${reason}`] = n;
  return out;
}
