/**
 * The sampling temperatures the calls behind training samples recorded (LlmCall.sampling): what
 * their logprobs are relative to. null where a call did not record one (an older record, or a
 * request through `spindle proxy` that left it to the backend).
 */
import { UsageError } from '../core/errors.ts';
import type { Trajectory } from '../core/trajectory.ts';
import type { TrainingSample } from './samples-types.ts';

export function recordedTemperatures(samples: readonly TrainingSample[], trajectories: ReadonlyMap<string, Trajectory>): Set<number | null> {
  const temperatures = new Set<number | null>();
  for (const sample of samples) {
    for (const span of sample.spans) {
      temperatures.add(trajectories.get(sample.trajectoryId)?.turns[span.turn]?.calls[span.call]?.sampling?.temperature ?? null);
    }
  }
  return temperatures;
}

/**
 * The temperature offline training scores the policy at: `configured` when given, else the one
 * temperature the calls recorded (none recorded counts as 1). Several, or greedy calls (0, whose
 * logprobs are no sampling distribution to correct for), are refused naming `${label}.temperature`.
 */
export function offlineTemperature(configured: number | undefined, recorded: ReadonlySet<number | null>, label = 'offline'): number {
  if (configured !== undefined) return configured;
  const temperatures = [...new Set([...recorded].map((t) => t ?? 1))].sort((a, b) => a - b);
  if (temperatures.length > 1) {
    throw new UsageError(
      `${label}.temperature: the trained calls were sampled at temperatures ${temperatures.join(', ')} (unrecorded counted as 1), ` +
        'and the loss scores the policy at one: set it, or select calls sampled alike (--task)',
    );
  }
  const [only = 1] = temperatures;
  if (only === 0) {
    throw new UsageError(`${label}.temperature: the trained calls were greedy (temperature 0), so their logprobs are no sampling distribution: set the temperature they are relative to`);
  }
  return only;
}
