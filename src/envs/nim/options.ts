/** Nim's options: the starting heaps (fixed or seeded random), which starts are kept, the opponent, and who moves first. */
import { z } from 'zod';
import { firstMovers, isWinningStart, winningShare } from './starts.ts';
import { nimSum } from './rules.ts';

const mover = (agentFirst: boolean): string => (agentFirst ? 'the agent moving first' : 'the opponent moving first');

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
    /**
     * `winning`: only starts the agent wins with perfect play (nim-sum ≠ 0 when it moves first, = 0
     * when the opponent does); random heaps are drawn uniformly among those.
     */
    starts: z.enum(['all', 'winning']).default('all'),
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
    if (o.starts !== 'winning') return;
    for (const { agentFirst } of firstMovers(o)) {
      if (o.heaps === 'random') {
        if (winningShare(o.heapCount, o.maxHeap, agentFirst) > 0) continue;
        ctx.addIssue({
          code: 'custom',
          path: ['starts'],
          message:
            `starts=winning: no start of ${o.heapCount} heaps of 1..${o.maxHeap} is won by the agent with ${mover(agentFirst)} ` +
            `(it needs a nim-sum ${agentFirst ? 'other than 0' : 'of 0'}); change heapCount, maxHeap or first`,
        });
      } else if (!isWinningStart(o.heaps, agentFirst)) {
        ctx.addIssue({
          code: 'custom',
          path: ['starts'],
          message:
            `starts=winning: heaps [${o.heaps.join(', ')}] (nim-sum ${nimSum(o.heaps)}) are lost for the agent with ${mover(agentFirst)}; ` +
            'fixed heaps need first=agent and a nim-sum other than 0, or first=opponent and a nim-sum of 0',
        });
      }
    }
  });

export type NimOptions = z.infer<typeof nimOptionsSchema>;
