/** Options of the hmm env, validated where they enter (`--env-opt`, config files). */
import { z } from 'zod';
import { reportOptionsShape } from '../report-options.ts';

const hundredthsRange = z
  .tuple([z.number().int().min(1).max(100), z.number().int().min(1).max(100)])
  .refine(([lo, hi]) => lo <= hi, 'the low end must not exceed the high end');

export const hmmOptionsSchema = z
  .object({
    /** Guesses per episode. */
    horizon: z.number().int().min(1).max(100).default(10),
    /** Number of hidden states (named A, B, ...). */
    states: z.number().int().min(2).max(4).default(2),
    /** Number of signal values (named x, y, ...); at least the number of states. */
    symbols: z.number().int().min(2).max(4).default(3),
    /** P(stay in the same state) is drawn per state from this range, in hundredths (e.g. [60, 90]). */
    stayPercent: hundredthsRange.default([60, 90]),
    /** P(a state emits its own signal) is drawn per state from this range, in hundredths. */
    clarityPercent: hundredthsRange.default([50, 85]),
    /**
     * Which signal each state emits most: 'random' draws the pairing per episode, so a guess must read
     * the episode's emission table; 'fixed' makes state A's x, B's y, ..., so the latest signal alone
     * points to the likeliest state across episodes (an easier variant, for comparison).
     */
    ownSignals: z.enum(['random', 'fixed']).default('random'),
    /** Reveal the true state after each guess (then the next guess conditions on it). */
    reveal: z.boolean().default(false),
    /** Retries after an illegal guess before the episode ends with `invalidPenalty`. */
    maxRetries: z.number().int().min(0).max(10).default(2),
    invalidPenalty: z.number().min(-100).max(0).default(-1),
    ...reportOptionsShape,
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.symbols < o.states) ctx.addIssue({ code: 'custom', path: ['symbols'], message: 'must be at least the number of states' });
  });

export type HmmOptions = z.output<typeof hmmOptionsSchema>;
