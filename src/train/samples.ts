/**
 * Recorded trajectories + their advantages → training samples (DESIGN.md rules 1 and 2).
 *
 * Every LLM call of turn k is its own trained completion with advantage turnAdvantages[k]: the
 * final action, each informational round, and each invalid answer that was retried. They are all
 * decisions the policy made in that episode, so the episode's credit goes to each of them (an
 * invalid retry is pushed down only insofar as the episode did worse: the env's invalid-action
 * penalty is in its reward; with `invalidAnswers: 'penalize'` every refused answer gets a fixed
 * negative advantage instead). Calls whose ids cannot be trained on are counted by reason
 * (samples-calls.ts); the rest are packed per conversation where the ids are prefix-stable
 * (samples-pack.ts).
 */
import type { Trajectory } from '../core/trajectory.ts';
import type { TrajectoryAdvantages } from '../advantage/types.ts';
import { assembleSample } from './samples-assemble.ts';
import type { Completion } from '../core/completion.ts';
import { callVerdict, endsTurn, type CallVerdict, type TrainableCall } from './samples-calls.ts';
import { parseSamplesConfig, type ResolvedSamplesConfig, type SamplesConfig } from './samples-config.ts';
import { packConversation } from './samples-pack.ts';
import { EXCLUSION_REASONS, type ExclusionReason, type SampleBatch, type SampleStats, type TrainingSample } from './samples-types.ts';

/** Stats of a batch before any sample is built (every count 0). */
export function emptySampleStats(): SampleStats {
  return {
    trajectories: 0,
    calls: 0,
    trainedCalls: 0,
    samples: 0,
    tokens: 0,
    trainedTokens: 0,
    tokensUnpacked: 0,
    excluded: Object.fromEntries(EXCLUSION_REASONS.map((r) => [r, 0])) as Record<ExclusionReason, number>,
    approximateIds: 0,
    truncated: { length: 0, episode: 0 },
    penalized: 0,
    invalidPenalized: 0,
    packedShare: 0,
    packFallbacks: 0,
    packLimitSplits: 0,
    missingEndOfTurn: 0,
  };
}

export interface BuildSamplesOptions {
  /**
   * Trajectories of which only the refused answers are trained (under invalidAnswers 'penalize',
   * at invalidPenalty; their other calls are not read): those of zero-variance groups the trainer
   * drops, whose advantages are 0. Without them a policy whose answers all turned malformed (every
   * group tied at the invalid outcome) has nothing left to train on and stays there.
   */
  refusedOnly?: ReadonlySet<string>;
}

/**
 * One sample list for the trajectories that have advantages, in the order of `advantages`
 * (trajectories without an entry, e.g. of dropped zero-variance groups, are not read). Throws when
 * an advantage names no given trajectory or does not have one value per turn.
 */
export function buildSamples(
  trajectories: readonly Trajectory[],
  advantages: readonly TrajectoryAdvantages[],
  config: SamplesConfig = {},
  options: BuildSamplesOptions = {},
): SampleBatch {
  const c = parseSamplesConfig(config);
  const byId = indexTrajectories(trajectories);
  const stats = emptySampleStats();
  const samples: TrainingSample[] = [];
  let packedCalls = 0;

  advantages.forEach((entry, i) => {
    const trajectory = byId.get(entry.trajectoryId);
    if (!trajectory) throw new Error(`advantages.${i}.trajectoryId: no trajectory '${entry.trajectoryId}' was given`);
    checkTurnAdvantages(entry, trajectory, i);
    const refusedOnly = options.refusedOnly?.has(trajectory.id) === true;
    if (refusedOnly && (c.invalidAnswers !== 'penalize' || !trajectory.turns.some((t) => t.calls.some((call) => call.invalid === true)))) return;
    stats.trajectories++;

    const trainable: TrainableCall[] = [];
    trajectory.turns.forEach((turn, k) => {
      turn.calls.forEach(({ completion, invalid }, j) => {
        if (refusedOnly && invalid !== true) return;
        const verdict = tallyCall(stats, completion, trajectory.status === 'truncated', c);
        if (!verdict) return;
        const invalidPenalized = !verdict.penalized && invalid === true && c.invalidAnswers === 'penalize';
        if (invalidPenalized) stats.invalidPenalized++;
        trainable.push({
          turn: k,
          call: j,
          promptIds: verdict.promptIds,
          completionIds: verdict.completionIds,
          logprobs: verdict.logprobs,
          advantage: verdict.penalized ? c.truncationPenalty : invalidPenalized ? c.invalidPenalty : entry.turnAdvantages[k],
          policyVersion: completion.policyVersion,
          finishReason: completion.finishReason,
          truncation: verdict.truncation,
          exactIds: verdict.exactIds,
          penalized: verdict.penalized,
        });
      });
    });

    const packing = packConversation(trainable, c);
    stats.packFallbacks += packing.fallbacks;
    stats.packLimitSplits += packing.limitSplits;
    const owner = { trajectoryId: trajectory.id, groupId: entry.groupId, score: trajectory.reward };
    for (const sequence of packing.sequences) {
      if (sequence.length > 1) packedCalls += sequence.length;
      samples.push(assembleSample(sequence, owner));
    }
    for (const call of trainable) stats.tokensUnpacked += call.promptIds.length + call.completionIds.length;
    stats.trainedCalls += trainable.length;
  });

  countSamples(stats, samples);
  stats.packedShare = stats.trainedCalls === 0 ? 0 : packedCalls / stats.trainedCalls;
  return { samples, stats };
}

/**
 * A call's verdict (samples-calls.ts) counted in `stats` (calls, truncations, exclusions by reason,
 * approximate ids, penalties, missing end-of-turn ids); null when it cannot be trained on.
 */
export function tallyCall(stats: SampleStats, completion: Completion, episodeTruncated: boolean, c: ResolvedSamplesConfig): Extract<CallVerdict, { train: true }> | null {
  stats.calls++;
  const verdict = callVerdict(completion, episodeTruncated, c);
  if (verdict.truncation) stats.truncated[verdict.truncation]++;
  if (!verdict.train) {
    stats.excluded[verdict.reason]++;
    return null;
  }
  if (!verdict.exactIds) stats.approximateIds++;
  if (verdict.penalized) stats.penalized++;
  if (!endsTurn(completion, c.endOfTurnTokenIds)) stats.missingEndOfTurn++;
  return verdict;
}

/** The built samples' count and token totals into `stats`. */
export function countSamples(stats: SampleStats, samples: readonly TrainingSample[]): void {
  stats.samples = samples.length;
  for (const sample of samples) {
    stats.tokens += sample.tokens.length;
    for (const m of sample.lossMask) stats.trainedTokens += m;
  }
}

function indexTrajectories(trajectories: readonly Trajectory[]): Map<string, Trajectory> {
  const byId = new Map<string, Trajectory>();
  trajectories.forEach((t, i) => {
    if (byId.has(t.id)) throw new Error(`trajectories.${i}.id: '${t.id}' appears twice`);
    byId.set(t.id, t);
  });
  return byId;
}

function checkTurnAdvantages(entry: TrajectoryAdvantages, trajectory: Trajectory, i: number): void {
  const { turnAdvantages } = entry;
  if (turnAdvantages.length !== trajectory.turns.length) {
    throw new Error(
      `advantages.${i}.turnAdvantages: ${turnAdvantages.length} values for trajectory '${trajectory.id}', which has ${trajectory.turns.length} turns`,
    );
  }
  const bad = turnAdvantages.findIndex((a) => !Number.isFinite(a));
  if (bad >= 0) throw new Error(`advantages.${i}.turnAdvantages.${bad}: must be a finite number, got ${turnAdvantages[bad]}`);
}
