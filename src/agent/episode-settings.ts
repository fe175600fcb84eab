/** How an episode is played: limits and sampling options, validated where they enter. */
import { z } from 'zod';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';
import type { Policy } from '../policy/policy.ts';
import type { RewardConfig } from '../rewards/reward.ts';

export const episodeSettingsSchema = z.strictObject({
  /** Decisions before the episode ends as truncated (the env's own cap applies too). */
  maxTurns: z.number().int().min(1).default(32),
  /** Max new tokens per policy call. */
  maxTokens: z.number().int().min(1).default(512),
  temperature: z.number().min(0).default(1),
  topP: z.number().gt(0).max(1).optional(),
  topK: z.number().int().min(1).optional(),
  stop: z.array(z.string()).optional(),
  /** Abort one policy call after this many ms; the episode then ends as truncated. Unset: no timeout. */
  callTimeoutMs: z.number().int().min(1).optional(),
  /** Informational calls answered per decision; one more makes the answer an invalid action. */
  maxInformationalCalls: z.number().int().min(0).default(4),
  /**
   * Token budget of one prompt plus maxTokens, checked before every call when the policy can count
   * tokens (policy.countTokens); the policy's context length applies as well.
   */
  contextBudget: z.number().int().min(1).optional(),
  /**
   * Answers drawn at each decision of an env that scores every legal action exactly
   * (env.actionRewards, dense envs): the first is played, the others are recorded beside it with
   * their exact expected rewards (LlmCall.decision), for per-decision groups. 1: only the played one.
   */
  decisionSamples: z.number().int().min(1).max(64).default(1),
});

export type EpisodeSettings = z.output<typeof episodeSettingsSchema> & {
  /** Reward functions applied to every turn beside the env's parts, and the composite's weights. */
  rewards?: RewardConfig;
  /** Aborting it fails the episodes still running. */
  signal?: AbortSignal;
};

/** Fills defaults and validates; a bad value is a UsageError naming the field. */
export function resolveEpisodeSettings(raw: Record<string, unknown> = {}): z.output<typeof episodeSettingsSchema> {
  const parsed = episodeSettingsSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`invalid episode settings: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/**
 * The settings a policy plays with when the caller left maxTokens open: its own answer budget
 * (Policy.answerBudget: a trained checkpoint's) where it has one, else the settings' maxTokens.
 * Reserving the default 512 tokens for an answer of ~30 cut a ten-turn hmm episode off after 6
 * turns in a 1,024-token context.
 */
export function withAnswerBudget<S extends { maxTokens: number }>(episode: S, policy: Pick<Policy, 'answerBudget'>): S {
  return policy.answerBudget === undefined ? episode : { ...episode, maxTokens: policy.answerBudget };
}
