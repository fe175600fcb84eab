/** Classifies an episode as a win, loss or draw. */

export type Outcome = 'win' | 'loss' | 'draw';

/** The last step's `info.outcome` when the env gives one, otherwise the sign of the env's return. */
export function episodeOutcome(lastInfo: Record<string, unknown> | undefined, envReturn: number): Outcome {
  const stated = lastInfo?.outcome;
  if (stated === 'win' || stated === 'loss' || stated === 'draw') return stated;
  return envReturn > 0 ? 'win' : envReturn < 0 ? 'loss' : 'draw';
}
