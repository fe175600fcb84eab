/** Blackjack's options: Gymnasium's `natural` and `sab` flags. */
import { z } from 'zod';

export const blackjackOptionsSchema = z
  .object({
    /** A winning natural (ace + ten-card as the first two cards) pays 1.5. */
    natural: z.boolean().default(false),
    /** Sutton & Barto rules (overrides `natural`): a player natural beats any dealer hand but a natural. */
    sab: z.boolean().default(false),
  })
  .strict();

export type BlackjackOptions = z.infer<typeof blackjackOptionsSchema>;
