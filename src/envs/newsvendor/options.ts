/** Options of the newsvendor env, validated where they enter (`--env-opt`, config files). */
import { z } from 'zod';
import { reportOptionsShape } from '../report-options.ts';

const intRange = (min: number, max: number) =>
  z
    .tuple([z.number().int().min(min).max(max), z.number().int().min(min).max(max)])
    .refine(([lo, hi]) => lo <= hi, 'the low end must not exceed the high end');

export const newsvendorOptionsSchema = z
  .object({
    /** Days (orders) per episode. */
    horizon: z.number().int().min(1).max(100).default(5),
    /** Shape of each day's demand: Poisson with the day's mean, or uniform on mean ± uniformSpread. */
    demand: z.enum(['poisson', 'uniform']).default('poisson'),
    /** Each day's mean demand is drawn uniformly from these whole numbers. */
    meanRange: intRange(1, 200).default([4, 12]),
    uniformSpread: z.number().int().min(0).max(100).default(4),
    /** Price, cost and salvage are drawn per episode, uniformly from these whole numbers. */
    priceRange: intRange(1, 1000).default([8, 12]),
    costRange: intRange(1, 1000).default([3, 6]),
    salvageRange: intRange(0, 1000).default([0, 2]),
    /** Orders offered: 0..maxOrder units. */
    maxOrder: z.number().int().min(1).max(500).default(30),
    /** Retries after an illegal order before the episode ends with `invalidPenalty`. */
    maxRetries: z.number().int().min(0).max(10).default(2),
    invalidPenalty: z.number().min(-1e6).max(0).default(-50),
    ...reportOptionsShape,
  })
  .strict()
  .superRefine((o, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (o.costRange[1] >= o.priceRange[0]) issue('costRange', 'every cost must be below every price (costRange high < priceRange low)');
    if (o.salvageRange[1] >= o.costRange[0]) issue('salvageRange', 'every salvage value must be below every cost (salvageRange high < costRange low)');
    if (o.demand === 'uniform' && o.meanRange[0] < o.uniformSpread) issue('meanRange', 'uniform demand needs meanRange low >= uniformSpread (demand cannot be negative)');
    if (o.maxOrder < o.meanRange[1]) issue('maxOrder', 'must be at least the highest mean demand (meanRange high)');
  });

export type NewsvendorOptions = z.output<typeof newsvendorOptionsSchema>;

/** The whole numbers lo..hi, the values a parameter is drawn from uniformly. */
export function wholeNumbers([lo, hi]: readonly [number, number]): number[] {
  return Array.from({ length: hi - lo + 1 }, (_, k) => lo + k);
}
