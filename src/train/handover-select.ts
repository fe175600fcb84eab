/**
 * Choosing the policy a run hands over (train-config.ts `select`). Late in a run the weights of
 * single steps can differ by much in what they play greedily, and the weight average is better than
 * the last step's weights at some seeds and worse at others (the bandit: docs/results.md, "Bandit").
 * So the candidates, the weight average and RL's own weights at the run's late checkpoints, each
 * play the same validation seeds greedily, a block apart from the evaluation seeds that then judge
 * the one chosen (trainer-seeds.ts), and the highest mean return wins. Ties go to the earlier
 * candidate in the order: the average, the last step, then the earlier steps from late to early.
 */
import { tree } from '../model/engine.ts';
import { toParams, type HostParams } from '../model/params.ts';
import type { EmbeddedPolicy } from '../policy/embedded.ts';
import { greedySummary, type PeriodicEvalRequest } from './trainer-eval.ts';
import { validationSeeds } from './trainer-seeds.ts';
import type { HandOverSelection, HandOverWeights, ValidatedCandidate } from './trainer-state.ts';

/** The checkpointed steps from ⌊from × steps⌋ (at least 1) up to, not including, the last step. */
export function earlierCandidateSteps(from: number, steps: number, checkpointEvery: number): number[] {
  const first = Math.max(1, Math.floor(from * steps));
  const out: number[] = [];
  for (let step = steps - 1; step >= first; step--) if (step % checkpointEvery === 0) out.push(step);
  return out;
}

export interface HandOverRequest<O extends Record<string, unknown>> {
  /** The env, the limits of an episode and the policy whose weights each candidate is loaded into. */
  play: Omit<PeriodicEvalRequest<O>, 'episodes' | 'policy'> & { policy: EmbeddedPolicy };
  episodes: number;
  /** The weight average, or null when the run does not average. */
  average: HostParams | null;
  /** RL's own weights after the last step. */
  last: { step: number; params: HostParams };
  /** Earlier steps (late to early) and how to read RL's own weights at each (from its checkpoint). */
  earlierSteps: readonly number[];
  loadEarlier: (step: number) => HostParams;
  /** Before the first candidate: how many there are. */
  onStart?: (count: number) => void;
  /** After each candidate: it, its index, the number of candidates and the seconds it took. */
  onCandidate?: (candidate: ValidatedCandidate, index: number, count: number, seconds: number) => void;
}

/** Plays every candidate on the validation seeds; the policy is left holding the last one played. */
export async function selectHandOver<O extends Record<string, unknown>>(
  request: HandOverRequest<O>,
): Promise<{ selection: HandOverSelection; params: HostParams }> {
  const seeds = validationSeeds(request.episodes);
  const order: HandOverWeights[] = [...(request.average ? ['average' as const] : []), request.last.step, ...request.earlierSteps];
  const weightsOf = (w: HandOverWeights): HostParams =>
    w === 'average' ? request.average! : w === request.last.step ? request.last.params : request.loadEarlier(w);
  request.onStart?.(order.length);
  const candidates: ValidatedCandidate[] = [];
  let best: { index: number; params: HostParams } | null = null;
  for (const [index, weights] of order.entries()) {
    const start = performance.now();
    const host = weightsOf(weights);
    const params = toParams(host);
    request.play.policy.updateWeights(params, weights === 'average' ? request.last.step : weights);
    tree.dispose(params);
    const label = weights === 'average' ? 'the weight average' : `the weights of step ${weights}`;
    const summary = await greedySummary(request.play, seeds, `validation of ${label}`);
    const candidate: ValidatedCandidate = {
      weights,
      meanReturn: summary.meanReturn.mean,
      ci95: summary.meanReturn.ci95,
      failed: summary.episodes.failed,
    };
    candidates.push(candidate);
    if (best === null || candidate.meanReturn > candidates[best.index].meanReturn) best = { index, params: host };
    request.onCandidate?.(candidate, index, order.length, (performance.now() - start) / 1000);
  }
  return {
    selection: { firstSeed: seeds[0], episodes: request.episodes, candidates, chosen: candidates[best!.index].weights },
    params: best!.params,
  };
}
