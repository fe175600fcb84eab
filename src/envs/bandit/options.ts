/** Bandit options: the number of arms and of pulls. */
import { z } from 'zod';

export const banditOptionsSchema = z
  .object({
    /** Number of arms; each pays 1 with its own probability, drawn uniformly in [0, 1) from the seed. */
    k: z.number().int().min(2).max(10).default(3),
    /** Number of pulls in an episode. */
    horizon: z.number().int().min(1).max(200).default(10),
  })
  .strict();

export type BanditOptions = z.infer<typeof banditOptionsSchema>;
