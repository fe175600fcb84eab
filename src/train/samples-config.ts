/** Options of `buildSamples`, plain JSON from the run's config; a bad field is a UsageError naming it. */
import { z } from 'zod';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';

export const samplesConfigSchema = z.strictObject({
  /** Pack the calls of one conversation into one sequence where their ids are prefix-stable. */
  pack: z.boolean().default(true),
  /** Longest packed sequence; a call that would exceed it starts a new one. null: no limit. */
  maxPackedTokens: z.number().int().positive('must be a positive integer (or null for no limit)').nullable().default(null),
  /**
   * Calls cut at max tokens and calls of truncated episodes: 'mask' leaves them out, 'penalize'
   * trains them with `truncationPenalty` as their advantage, 'keep' trains them as usual (flagged).
   */
  truncated: z.enum(['mask', 'penalize', 'keep']).default('mask'),
  /** The advantage of a truncated call under 'penalize' (it replaces the turn's advantage). */
  truncationPenalty: z.number().max(0, 'a penalty pushes down: must be ≤ 0').default(-1),
  /**
   * Answers the env refused (not a legal action): 'share' trains them with their turn's advantage
   * like every call of the episode (the env's invalid-action penalty, when the answer ended the
   * episode, is in the reward); 'penalize' trains each with `invalidPenalty` as its advantage, so an
   * invalid answer that was retried and followed by a win is still pushed down. The RL trainer
   * also trains refused answers of groups it drops for tying (trainer-step.ts). 'penalize' is the
   * default because under 'share' a format collapse cannot heal: measured on Blackjack (β 0.3
   * annealed to 0, seed 2), one update at step 42 turned the token after "stick" from the closing
   * token into the tool-call prefix, every stick was then malformed and lost, every group tied
   * (all −1) and was dropped, and nothing trained, not even the KL, for 117 steps.
   */
  invalidAnswers: z.enum(['share', 'penalize']).default('penalize'),
  /** The advantage of a refused answer under invalidAnswers 'penalize'. */
  invalidPenalty: z.number().max(0, 'a penalty pushes down: must be ≤ 0').default(-1),
  /** Train on ids a backend re-tokenised (tokenIdsExact false), flagged; off by default (rule 1). */
  allowApproximateIds: z.boolean().default(false),
  /** End-of-turn ids (e.g. <|im_end|>, eos): a finished completion not ending in one is counted. Empty: not checked. */
  endOfTurnTokenIds: z.array(z.number().int().min(0)).default([]),
  /**
   * The RL trainer trains byte-identical samples (same tokens, loss mask, advantages and policy
   * versions; e.g. every Blackjack sample that sticks at the first decision) once, weighted by their
   * count (samples-merge.ts). Exact: the loss, its gradient and the metrics weight each token by its
   * count, which equals training every copy in the same update; it only saves the copies' forward
   * and backward. (The copies now always share a mini-batch and a layout, where a split could have
   * put them in different optimiser updates.)
   */
  mergeIdentical: z.boolean().default(true),
});

export type SamplesConfig = z.input<typeof samplesConfigSchema>;
export type ResolvedSamplesConfig = z.output<typeof samplesConfigSchema>;

export function parseSamplesConfig(config: unknown): ResolvedSamplesConfig {
  const parsed = samplesConfigSchema.safeParse(config ?? {});
  if (!parsed.success) throw new UsageError(`samples options: ${describeZodError(parsed.error, 'samples')}`);
  return parsed.data;
}
