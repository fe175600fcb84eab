/** A batch's samples split into `parts` nearly equal mini-batches, in an order the rng shuffles. */
import type { Rng } from '../core/random.ts';

export function miniBatches<T>(samples: readonly T[], parts: number, rng: Rng): T[][] {
  const order = samples.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const n = Math.min(parts, samples.length);
  return Array.from({ length: n }, (_, k) => order.slice(Math.floor((k * order.length) / n), Math.floor(((k + 1) * order.length) / n)).map((i) => samples[i]));
}
