/** Options of the market env, validated where they enter (`--env-opt`, config files). */
import { z } from 'zod';

const range = (min: number, max: number) =>
  z
    .tuple([z.number().min(min).max(max), z.number().min(min).max(max)])
    .refine(([lo, hi]) => lo <= hi, 'the low end must not exceed the high end');

export const marketOptionsSchema = z
  .object({
    /** Trading ticks (decisions) per episode. */
    horizon: z.number().int().min(1).max(200).default(10),
    /** Number of assets (ACME, BOLT, CORE, DUNE). */
    assets: z.number().int().min(1).max(4).default(3),
    /** Starting cash; PnL and risk are measured in percent of it. */
    balance: z.number().min(100).max(1e9).default(10000),
    /** Each asset's first price is drawn uniformly from this range. */
    priceRange: range(1, 1e6).default([50, 150]),
    /** Each asset's drift (expected log move per tick, in %) is drawn from these values. */
    driftsPercent: z.array(z.number().min(-10).max(10)).min(1).max(20).default([-1, -0.5, 0, 0.5, 1]),
    /** Each asset's volatility (std of the log move per tick, in %) is drawn from this range at 0.1 steps. */
    volPercentRange: range(0.1, 20).default([1, 3]),
    /** Show each asset's drift and volatility; without it the agent must infer them from price history. */
    showOutlook: z.boolean().default(true),
    /** Past prices returned by `get_price`. */
    historyLength: z.number().int().min(1).max(50).default(5),
    /** Most shares one buy or sell may trade. */
    maxTrade: z.number().int().min(1).max(100).default(10),
    /** Position limit per asset, in shares (long, and short when allowed). */
    maxPosition: z.number().int().min(1).max(10000).default(50),
    allowShort: z.boolean().default(true),
    /** λ in the risk part −(λ/2)·Var[next tick's PnL], PnL in % of the starting balance. */
    riskAversion: z.number().min(0).max(100).default(1),
    /** Composite weights of the reward parts. */
    pnlWeight: z.number().min(-100).max(100).default(1),
    riskWeight: z.number().min(-100).max(100).default(1),
    formatWeight: z.number().min(-100).max(100).default(0.2),
    reasoningWeight: z.number().min(-100).max(100).default(0.2),
    /** A reasoning segment of this many words counts as sensibly long. */
    reasoningMinWords: z.number().int().min(0).max(10000).default(5),
    reasoningMaxWords: z.number().int().min(1).max(10000).default(150),
    /** Retries after an illegal action before the episode ends with `invalidPenalty`. */
    maxRetries: z.number().int().min(0).max(10).default(2),
    invalidPenalty: z.number().min(-100).max(0).default(-1),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.reasoningMinWords > o.reasoningMaxWords) {
      ctx.addIssue({ code: 'custom', path: ['reasoningMinWords'], message: 'must not exceed reasoningMaxWords' });
    }
    if (Math.floor(o.volPercentRange[1] * 10 + 1e-9) < Math.ceil(o.volPercentRange[0] * 10 - 1e-9)) {
      ctx.addIssue({ code: 'custom', path: ['volPercentRange'], message: 'must contain a multiple of 0.1' });
    }
  });

export type MarketOptions = z.output<typeof marketOptionsSchema>;
