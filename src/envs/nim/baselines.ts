/** Nim's simple baseline: win on the spot when one heap is left, otherwise stall on the largest heap. */
import { argmax, legalActionWhere } from '../baseline-rules.ts';
import type { EnvBaseline } from '../env.ts';

export const nimBaselines: Record<string, EnvBaseline> = {
  'last-or-one': {
    description: 'take the whole heap when one heap is left (the last object wins), otherwise take 1 from the largest heap (the first on ties)',
    choose(view) {
      const { heaps } = view.state() as { heaps: number[] };
      const left = heaps.filter((h) => h > 0);
      if (left.length === 0) throw new Error("baseline 'last-or-one': every heap is empty (the episode has ended)");
      const heap = argmax(heaps);
      const count = left.length === 1 ? heaps[heap] : 1;
      return legalActionWhere(view, 'last-or-one', (a) => a.arguments.heap === heap + 1 && a.arguments.count === count, `taking ${count} from heap ${heap + 1}`);
    },
  },
};
