/**
 * The format anchor: supervised samples that hold the answer's format during RL, taught nothing
 * about which action is better.
 *
 * Why: format tokens sit at p ≈ 1 after the warm start, so RL and the KL give them almost no
 * gradient, and nothing holds their margin. On Blackjack with natural=true (seed 1) one ordinary
 * update (largest parameter change 2.3e-3) moved the token after `"arguments": ` from `{}}` (logprob
 * −9e-5) to `<tool_call>` (`{}}` at −11.8), the change amplified layer by layer; every answer then
 * ran on to max tokens, was masked as truncated, every group tied, and nothing trained again.
 * A policy gradient cannot pull such an answer back either: pushing down a token at p ≈ 1 has a
 * gradient of 1 − p ≈ 0. The likelihood of the right token at p ≈ e^−12 has a gradient of ≈ 1.
 *
 * What: the decisions of random-policy episodes (the warm start's own demonstration seeds), each
 * with every legal action's answer as the chat template writes it (warm-start-demos.ts). Only the
 * completion tokens that every legal action's answer shares, its common prefix and common suffix,
 * are targets: the tokens that tell actions apart are never trained, so the anchor teaches the
 * format and no strategy. A decision with one legal action, or with more than MAX_ANCHOR_ACTIONS,
 * is left out (nothing to tell format from choice by).
 *
 * When: a step whose rollouts answered illegally more often than `invalidRate` (the warm start
 * hands over under 2 %) adds `decisions` of them, drawn from Rng(run seed, step), so a resumed run
 * draws the same. Built on first use: a healthy run never pays for it and trains exactly as
 * without it.
 */
import { z } from 'zod';
import { Rng } from '../core/random.ts';
import type { Message, ToolSpec } from '../core/messages.ts';
import type { EnvSpec } from '../envs/env.ts';
import type { ModelAssets } from './default-model.ts';
import type { LayoutSample } from './rl-batch.ts';
import { demoSeeds } from './trainer-seeds.ts';
import { warmStartDemonstrations, type DemoCall } from './warm-start-demos.ts';

/** Decisions with more legal actions than this are not anchored (each answer is encoded to find the shared tokens). */
export const MAX_ANCHOR_ACTIONS = 64;

export const formatAnchorSchema = z.strictObject({
  /** A step adds the anchor when its rollouts' invalid-answer rate is above this; null: never. */
  invalidRate: z.number().min(0, 'must be ≥ 0').lt(1, 'must be < 1').nullable().default(0.1),
  /** Anchor decisions a triggered step adds. */
  decisions: z.number().int().min(1, 'must be ≥ 1').max(4096).default(32),
  /** Random-policy episodes whose decisions make the pool. */
  episodes: z.number().int().min(1, 'must be ≥ 1').max(100_000).default(64),
});
export type FormatAnchorSettings = z.output<typeof formatAnchorSchema>;

/** The completion positions every answer shares: its common token prefix and common token suffix. */
export function sharedFormatMask(answers: readonly (readonly number[])[]): (0 | 1)[] {
  const [first, ...others] = answers;
  if (!first) return [];
  let prefix = first.length;
  let suffix = first.length;
  for (const other of others) {
    let p = 0;
    while (p < Math.min(prefix, other.length) && other[p] === first[p]) p++;
    prefix = p;
    let q = 0;
    while (q < Math.min(suffix, other.length) && other[other.length - 1 - q] === first[first.length - 1 - q]) q++;
    suffix = q;
  }
  return first.map((_, i) => (i < prefix || i >= first.length - suffix ? 1 : 0));
}

/** One decision's anchor sample (the taken answer, its shared tokens the targets); null: nothing to anchor. */
export function anchorSample(call: DemoCall): LayoutSample | null {
  const others = call.otherCompletionIds?.() ?? [];
  if (others.length === 0) return null;
  const mask = sharedFormatMask([call.completionIds, ...others]);
  if (!mask.includes(1)) return null;
  const tokens = [...call.promptIds, ...call.completionIds];
  return { tokens, lossMask: tokens.map(() => 0), sftMask: [...call.promptIds.map(() => 0), ...mask] };
}

export interface FormatAnchorRequest<O extends Record<string, unknown>> {
  spec: EnvSpec<O>;
  options: O;
  assets: ModelAssets;
  promptIds: (messages: Message[], tools: ToolSpec[]) => number[];
  maxTurns: number;
  runSeed: number;
  settings: FormatAnchorSettings;
}

export class FormatAnchor<O extends Record<string, unknown>> {
  private pool: LayoutSample[] | null = null;

  constructor(private readonly request: FormatAnchorRequest<O>) {}

  /** Whether a step whose rollouts answered illegally at `invalidRate` adds the anchor. */
  triggers(invalidRate: number): boolean {
    const threshold = this.request.settings.invalidRate;
    return threshold !== null && invalidRate > threshold;
  }

  /** The anchor samples of RL step `step` (the pool is built on the first call). */
  async samples(step: number): Promise<LayoutSample[]> {
    const pool = (this.pool ??= await this.buildPool());
    if (pool.length === 0) return [];
    const rng = new Rng(this.request.runSeed, 0xa2c4 + step);
    return Array.from({ length: this.request.settings.decisions }, () => pool[rng.int(pool.length)]);
  }

  /** Decisions in the pool (0 before the first triggered step, or when the env has none to anchor). */
  get poolSize(): number {
    return this.pool?.length ?? 0;
  }

  private async buildPool(): Promise<LayoutSample[]> {
    const r = this.request;
    const demos = await warmStartDemonstrations({
      spec: r.spec,
      options: r.options,
      assets: r.assets,
      promptIds: r.promptIds,
      seeds: demoSeeds(r.runSeed, r.settings.episodes),
      maxTurns: r.maxTurns,
      languageModel: false,
      maxOtherActions: MAX_ANCHOR_ACTIONS,
    });
    return demos.episodeCalls.flat().flatMap((call) => anchorSample(call) ?? []);
  }
}
