/** Nim's options: the starting heaps (fixed or seeded random), the opponent, and who moves first. */
import { z } from 'zod';

export const nimOptionsSchema = z
  .object({
    /** Fixed starting heap sizes, or 'random': `heapCount` heaps of 1..`maxHeap` drawn from the seed. */
    heaps: z
      .union([z.array(z.number().int().min(1).max(15)).min(1).max(6), z.literal('random')])
      .default(() => [3, 4, 5]),
    heapCount: z.number().int().min(2).max(6).default(3),
    maxHeap: z.number().int().min(1).max(15).default(7),
    /** `optimal` plays Bouton's strategy; `random` picks uniformly among all legal moves. */
    opponent: z.enum(['optimal', 'random']).default('optimal'),
    /** Who moves first; `random` draws it from the seed (even odds). */
    first: z.enum(['agent', 'opponent', 'random']).default('agent'),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (Array.isArray(o.heaps) && o.heaps.length < 2 && o.first !== 'agent') {
      ctx.addIssue({
        code: 'custom',
        path: ['first'],
        message: 'with a single heap the opponent could take everything before you move: use first=agent or 2+ heaps',
      });
    }
  });

export type NimOptions = z.infer<typeof nimOptionsSchema>;
