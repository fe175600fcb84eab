/**
 * Per-decision advantages from recorded calls that carry the other samples of their decision
 * (LlmCall.decision, drawn by the agent loop on dense envs): one group per call, the played
 * completion and its alternatives, each with the env's exact expected reward (dense.ts). Samples
 * the env did not score (null: an answer that only asked for information) are left out. Explored
 * answers (train/explored-answers.ts: legal actions no answer sampled, never played) join their
 * decision's group when given.
 */
import type { Completion } from '../core/completion.ts';
import type { Trajectory } from '../core/trajectory.ts';
import { denseAdvantages, type DecisionGroup } from './dense.ts';
import { advantageStats, dropZeroVarianceGroups, type AdvantageStats } from './normalize.ts';
import type { DenseOptions } from './dense.ts';

/** One scored sample of a decision: where it was recorded and what it answered. */
export interface DecisionSampleRef {
  trajectoryId: string;
  turn: number;
  call: number;
  /** 0: the played completion; j > 0: alternative j − 1. */
  sample: number;
  completion: Completion;
  reward: number;
  invalid: boolean;
  /** Not sampled: a legal action the trainer wrote as an answer (train/explored-answers.ts). */
  explored?: boolean;
}

export interface DecisionAdvantageResult {
  /** The samples of the groups kept, each with its advantage, in recording order. */
  samples: (DecisionSampleRef & { advantage: number })[];
  /**
   * The samples of the zero-variance decisions left out, at advantage 0: all answers refused is
   * such a decision, and samples.invalidAnswers 'penalize' still trains those (samples-decisions.ts).
   */
  droppedSamples: (DecisionSampleRef & { advantage: number })[];
  groups: number;
  stats: AdvantageStats;
}

/**
 * The decision groups of these trajectories, each with its explored answers (`explored`, numbered
 * after the decision's completions), and every scored sample by its id (`${groupId}:${sample}`).
 */
export function decisionGroupsFromTrajectories(
  trajectories: readonly Trajectory[],
  explored: readonly DecisionSampleRef[] = [],
): { groups: DecisionGroup[]; refs: Map<string, DecisionSampleRef> } {
  const groups: DecisionGroup[] = [];
  const refs = new Map<string, DecisionSampleRef>();
  const exploredIn = new Map<string, DecisionSampleRef[]>();
  for (const e of explored) {
    const groupId = `${e.trajectoryId}:${e.turn}:${e.call}`;
    exploredIn.set(groupId, [...(exploredIn.get(groupId) ?? []), e]);
  }
  for (const t of trajectories) {
    t.turns.forEach((turn, k) => {
      turn.calls.forEach((call, c) => {
        const decision = call.decision;
        if (!decision) return;
        const groupId = `${t.id}:${k}:${c}`;
        const completions = [call.completion, ...decision.alternatives];
        const samples: DecisionGroup['samples'] = [];
        completions.forEach((completion, j) => {
          const reward = decision.rewards[j];
          if (reward === null || reward === undefined) return;
          const sampleId = `${groupId}:${j}`;
          samples.push({ sampleId, reward });
          refs.set(sampleId, { trajectoryId: t.id, turn: k, call: c, sample: j, completion, reward, invalid: decision.invalid[j] ?? false });
        });
        for (const e of exploredIn.get(groupId) ?? []) {
          const sampleId = `${groupId}:${e.sample}`;
          if (e.sample < completions.length || refs.has(sampleId)) throw new Error(`explored answer ${sampleId}: its number is taken by a completion or another explored answer`);
          samples.push({ sampleId, reward: e.reward });
          refs.set(sampleId, e);
        }
        exploredIn.delete(groupId);
        if (samples.length > 0) groups.push({ groupId, samples });
      });
    });
  }
  const orphan = exploredIn.keys().next();
  if (!orphan.done) throw new Error(`explored answer of decision ${orphan.value}: no such decision among the trajectories`);
  return { groups, refs };
}

/** GRPO within each decision (dense.ts), zero-variance decisions optionally dropped first. */
export function decisionAdvantages(
  trajectories: readonly Trajectory[],
  options: DenseOptions & { dropZeroVariance?: boolean } = {},
  explored: readonly DecisionSampleRef[] = [],
): DecisionAdvantageResult {
  const { dropZeroVariance, ...dense } = options;
  const { groups, refs } = decisionGroupsFromTrajectories(trajectories, explored);
  const { kept, dropped } = dropZeroVariance ? dropZeroVarianceGroups(groups) : { kept: groups, dropped: [] };
  const advantages = denseAdvantages(kept, dense);
  const samples = advantages.map((a) => ({ ...refs.get(a.sampleId)!, advantage: a.advantage }));
  const left = new Set(dropped);
  const droppedSamples = groups.filter((g) => left.has(g.groupId)).flatMap((g) => g.samples.map((s) => ({ ...refs.get(s.sampleId)!, advantage: 0 })));
  return {
    samples,
    droppedSamples,
    groups: groups.length,
    stats: advantageStats(
      advantages.map((a) => a.advantage),
      groups,
      dropped,
    ),
  };
}
