/**
 * A batch's samples split into `parts` nearly equal mini-batches, in an order the rng shuffles.
 * With `unitOf`, samples of the same unit (e.g. a decision's answers, which share their prompt and
 * so share it in a layout row: rl-batch.ts) stay in one mini-batch; split apart, each part would
 * compute the prompt again. Samples whose unit is undefined are units of their own.
 */
import type { Rng } from '../core/random.ts';

export function miniBatches<T>(samples: readonly T[], parts: number, rng: Rng, unitOf?: (sample: T) => string | undefined): T[][] {
  // One part keeps every unit whole anyway; its samples keep the order they had before units
  // existed (a resumed run's metrics matched the uninterrupted run's to the bit with it, and not
  // with the units' order: 0.14118950 against 0.14118948, not yet explained).
  const units: T[][] = [];
  if (parts <= 1) unitOf = undefined;
  const byKey = new Map<string, T[]>();
  for (const s of samples) {
    const key = unitOf?.(s);
    const known = key === undefined ? undefined : byKey.get(key);
    if (known) known.push(s);
    else {
      const unit = [s];
      units.push(unit);
      if (key !== undefined) byKey.set(key, unit);
    }
  }
  for (let i = units.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [units[i], units[j]] = [units[j], units[i]];
  }
  const n = Math.min(parts, units.length);
  // Part k starts at the first unit whose first sample is at or past ⌊k·N/n⌋ (one-sample units: the
  // slices of N/n samples each).
  const out: T[][] = Array.from({ length: n }, () => []);
  let seen = 0;
  let part = 0;
  for (const unit of units) {
    while (part < n - 1 && seen >= Math.floor(((part + 1) * samples.length) / n)) part++;
    out[part].push(...unit);
    seen += unit.length;
  }
  return out.filter((p) => p.length > 0);
}
