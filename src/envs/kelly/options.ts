/** Options of the kelly env, validated where they enter (`--env-opt`, config files). */
import { z } from 'zod';
import { roundGridValue } from './growth.ts';
import { reportOptionsShape } from '../report-options.ts';

const range = (min: number, max: number) =>
  z
    .tuple([z.number().min(min).max(max), z.number().min(min).max(max)])
    .refine(([lo, hi]) => lo <= hi, 'the low end must not exceed the high end');

export const kellyOptionsSchema = z
  .object({
    /** Bets per episode. */
    horizon: z.number().int().min(1).max(200).default(10),
    /** Starting bankroll (only sets the scale of the numbers shown). */
    bankroll: z.number().positive().max(1e9).default(100),
    /** The win probability p is drawn per episode, uniformly over this range at 0.01 steps. */
    winProbRange: range(0.01, 0.99).default([0.4, 0.75]),
    /** The net odds b are drawn per episode, uniformly over this range at 0.1 steps. */
    oddsRange: range(0.1, 10).default([0.5, 3]),
    /** Stakes offered: 0, fractionStep, 2·fractionStep, ... up to maxFraction. */
    fractionStep: z.number().min(0.01).max(0.5).default(0.05),
    /** Below 1: staking everything risks a log growth of −∞. */
    maxFraction: z.number().gt(0).lt(1).default(0.95),
    /** Retries after an illegal bet before the episode ends with `invalidPenalty`. */
    maxRetries: z.number().int().min(0).max(10).default(2),
    invalidPenalty: z.number().min(-100).max(0).default(-1),
    ...reportOptionsShape,
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.fractionStep > o.maxFraction) {
      ctx.addIssue({ code: 'custom', path: ['fractionStep'], message: 'must not exceed maxFraction' });
    }
    if (stepValues(o.winProbRange, 0.01).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['winProbRange'], message: 'must contain a multiple of 0.01' });
    }
    if (stepValues(o.oddsRange, 0.1).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['oddsRange'], message: 'must contain a multiple of 0.1' });
    }
  });

export type KellyOptions = z.output<typeof kellyOptionsSchema>;

/** The multiples of `unit` inside [lo, hi]: the values a parameter is drawn from, uniformly. */
export function stepValues([lo, hi]: readonly [number, number], unit: number): number[] {
  const first = Math.ceil(lo / unit - 1e-9);
  const last = Math.floor(hi / unit + 1e-9);
  const out: number[] = [];
  for (let k = first; k <= last; k++) out.push(roundGridValue(k * unit));
  return out;
}
