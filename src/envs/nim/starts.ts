/** The distribution of Nim's starting positions and first mover implied by the options. */
import type { NimOptions } from './options.ts';

export interface NimStart {
  heaps: number[];
  p: number;
}

/** P(the agent moves first). */
export function agentFirstProbability(options: NimOptions): number {
  return options.first === 'agent' ? 1 : options.first === 'opponent' ? 0 : 0.5;
}

/** Every ordered start (heap tuples) with its probability. */
export function orderedStarts(options: NimOptions): NimStart[] {
  if (options.heaps !== 'random') return [{ heaps: [...options.heaps], p: 1 }];
  const { heapCount, maxHeap } = options;
  const p = 1 / maxHeap ** heapCount;
  const out: NimStart[] = [];
  const build = (prefix: number[]): void => {
    if (prefix.length === heapCount) {
      out.push({ heaps: prefix, p });
      return;
    }
    for (let h = 1; h <= maxHeap; h++) build([...prefix, h]);
  };
  build([]);
  return out;
}

function factorial(n: number): number {
  let f = 1;
  for (let i = 2; i <= n; i++) f *= i;
  return f;
}

/** Starts up to order (sorted tuples) with the total probability of their orderings. */
export function unorderedStarts(options: NimOptions): NimStart[] {
  if (options.heaps !== 'random') return [{ heaps: [...options.heaps], p: 1 }];
  const { heapCount, maxHeap } = options;
  const total = maxHeap ** heapCount;
  const out: NimStart[] = [];
  const build = (prefix: number[], min: number): void => {
    if (prefix.length === heapCount) {
      // Orderings of a multiset: n! / prod(multiplicity!).
      const counts = new Map<number, number>();
      for (const h of prefix) counts.set(h, (counts.get(h) ?? 0) + 1);
      let orderings = factorial(heapCount);
      for (const c of counts.values()) orderings /= factorial(c);
      out.push({ heaps: prefix, p: orderings / total });
      return;
    }
    for (let h = min; h <= maxHeap; h++) build([...prefix, h], h);
  };
  build([], 1);
  return out;
}

/** How many ordered positions can arise from the starts (an upper bound). */
export function orderedStateBound(options: NimOptions): number {
  if (options.heaps === 'random') return (options.maxHeap + 1) ** options.heapCount;
  return options.heaps.reduce((acc, h) => acc * (h + 1), 1);
}
