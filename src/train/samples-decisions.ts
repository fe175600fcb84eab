/**
 * Training samples from per-decision advantages (advantage/from-decisions.ts, dense envs): every
 * scored sample of a decision, the played answer and the alternatives drawn beside it, is its own
 * sample, its prompt's exact ids plus its completion's, trained with its decision's advantage. The
 * same rules decide which calls can be trained on as for episodes (samples-calls.ts), but for the
 * episode's truncation, which does not touch a decision's exact credit; under invalidAnswers
 * 'penalize' a refused answer trains with invalidPenalty instead of its decision's advantage, as an
 * episode's refused answers do (samples.ts). Explored answers (train/explored-answers.ts) are
 * samples like the others, marked `explored`. Nothing is
 * packed (the samples of one decision share their prompt, not a conversation; identical ones merge
 * later, samples-merge.ts).
 */
import type { DecisionAdvantageResult } from '../advantage/from-decisions.ts';
import type { Trajectory } from '../core/trajectory.ts';
import { assembleSample } from './samples-assemble.ts';
import { parseSamplesConfig, type SamplesConfig } from './samples-config.ts';
import { countSamples, emptySampleStats, tallyCall } from './samples.ts';
import type { SampleBatch, TrainingSample } from './samples-types.ts';

export function buildDecisionSamples(
  trajectories: readonly Trajectory[],
  decisions: DecisionAdvantageResult['samples'],
  config: SamplesConfig = {},
): SampleBatch {
  const c = parseSamplesConfig(config);
  const known = new Set(trajectories.map((t) => t.id));
  const stats = emptySampleStats();
  stats.trajectories = new Set(decisions.map((d) => d.trajectoryId)).size;
  const samples: TrainingSample[] = [];
  for (const d of decisions) {
    if (!known.has(d.trajectoryId)) throw new Error(`buildDecisionSamples: no trajectory '${d.trajectoryId}' was given`);
    // A decision's credit is exact whatever became of its episode: a truncated episode (its return
    // incomplete, which is why episode samples are masked or penalised) leaves it as it is.
    const verdict = tallyCall(stats, d.completion, false, c);
    if (!verdict) continue;
    const invalidPenalized = !verdict.penalized && d.invalid && c.invalidAnswers === 'penalize';
    if (invalidPenalized) stats.invalidPenalized++;
    const sample = assembleSample(
      [
        {
          turn: d.turn,
          call: d.call,
          promptIds: verdict.promptIds,
          completionIds: verdict.completionIds,
          logprobs: verdict.logprobs,
          advantage: verdict.penalized ? c.truncationPenalty : invalidPenalized ? c.invalidPenalty : d.advantage,
          policyVersion: d.completion.policyVersion,
          finishReason: d.completion.finishReason,
          truncation: verdict.truncation,
          exactIds: verdict.exactIds,
          penalized: verdict.penalized,
        },
      ],
      { trajectoryId: d.trajectoryId, groupId: `${d.trajectoryId}:${d.turn}:${d.call}`, score: d.reward },
    );
    // One id per sample of the decision (assembleSample names a sequence by its first call).
    samples.push({ ...sample, id: `${sample.id}:${d.sample}`, ...(d.explored ? { explored: true } : {}) });
    stats.trainedCalls++;
    stats.tokensUnpacked += sample.tokens.length;
  }
  countSamples(stats, samples);
  return { samples, stats };
}
