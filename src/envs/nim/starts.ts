/**
 * The distribution of Nim's starting positions and first mover implied by the options. With
 * `starts: 'winning'` only starts the agent wins with perfect play are kept (renormalised): a
 * nonzero nim-sum when the agent moves first, a zero one when the opponent does. The first mover
 * is drawn as for `all`, then the heaps among that mover's winning starts.
 */
import type { Rng } from '../../core/random.ts';
import { nimSum } from './rules.ts';

export interface NimStart {
  heaps: number[];
  p: number;
}

/** The options that fix the starts (NimOptions has them; the schema checks them with these functions). */
export interface StartOptions {
  heaps: readonly number[] | 'random';
  heapCount: number;
  maxHeap: number;
  first: 'agent' | 'opponent' | 'random';
  starts: 'all' | 'winning';
}

/** Rejection draws before giving up; a winning share the options allow is at least ~5 %. */
const MAX_START_DRAWS = 100_000;

/** Does the agent win these starting heaps with perfect play? */
export function isWinningStart(heaps: readonly number[], agentFirst: boolean): boolean {
  return agentFirst ? nimSum(heaps) !== 0 : nimSum(heaps) === 0;
}

/** P(the agent moves first). */
export function agentFirstProbability(options: Pick<StartOptions, 'first'>): number {
  return options.first === 'agent' ? 1 : options.first === 'opponent' ? 0 : 0.5;
}

/** The possible first movers with their probabilities (those of probability 0 left out). */
export function firstMovers(options: Pick<StartOptions, 'first'>): { agentFirst: boolean; p: number }[] {
  const p = agentFirstProbability(options);
  return [
    { agentFirst: true, p },
    { agentFirst: false, p: 1 - p },
  ].filter((m) => m.p > 0);
}

/** Share of the uniform random starts (`heapCount` heaps of 1..`maxHeap`) the agent wins, by DP over the nim-sum. */
export function winningShare(heapCount: number, maxHeap: number, agentFirst: boolean): number {
  // Heaps are at most 15, so every nim-sum is below 16.
  let dist = new Array<number>(16).fill(0);
  dist[0] = 1;
  for (let i = 0; i < heapCount; i++) {
    const next = new Array<number>(16).fill(0);
    for (let x = 0; x < 16; x++) {
      if (dist[x] === 0) continue;
      for (let h = 1; h <= maxHeap; h++) next[x ^ h] += dist[x] / maxHeap;
    }
    dist = next;
  }
  return agentFirst ? 1 - dist[0] : dist[0];
}

/** Keeps the starts the agent wins (when asked) and renormalises. */
function keepWinning(options: StartOptions, agentFirst: boolean, starts: NimStart[]): NimStart[] {
  if (options.starts === 'all') return starts;
  const kept = starts.filter((s) => isWinningStart(s.heaps, agentFirst));
  const total = kept.reduce((a, s) => a + s.p, 0);
  if (total === 0) throw new Error(`nim: no winning start for the agent moving ${agentFirst ? 'first' : 'second'} (the options should have refused these)`);
  return kept.map((s) => ({ heaps: s.heaps, p: s.p / total }));
}

/** Every ordered start (heap tuples) with its probability, given who moves first. */
export function orderedStarts(options: StartOptions, agentFirst: boolean): NimStart[] {
  if (options.heaps !== 'random') return keepWinning(options, agentFirst, [{ heaps: [...options.heaps], p: 1 }]);
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
  return keepWinning(options, agentFirst, out);
}

function factorial(n: number): number {
  let f = 1;
  for (let i = 2; i <= n; i++) f *= i;
  return f;
}

/** Starts up to order (sorted tuples) with the total probability of their orderings, given who moves first. */
export function unorderedStarts(options: StartOptions, agentFirst: boolean): NimStart[] {
  if (options.heaps !== 'random') return keepWinning(options, agentFirst, [{ heaps: [...options.heaps], p: 1 }]);
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
  return keepWinning(options, agentFirst, out);
}

/** A seeded start as the env plays it: heaps, then the first mover (for `winning`: the first mover, then heaps until won). */
export function drawStart(options: StartOptions, rng: Rng): { heaps: number[]; agentFirst: boolean } {
  const { heaps, heapCount, maxHeap, first } = options;
  const drawHeaps = (): number[] => (heaps === 'random' ? Array.from({ length: heapCount }, () => 1 + rng.int(maxHeap)) : [...heaps]);
  const drawFirst = (): boolean => first === 'agent' || (first === 'random' && rng.next() < 0.5);
  if (options.starts === 'all') {
    const start = drawHeaps();
    return { heaps: start, agentFirst: drawFirst() };
  }
  const agentFirst = drawFirst();
  for (let i = 0; i < MAX_START_DRAWS; i++) {
    const start = drawHeaps();
    if (isWinningStart(start, agentFirst)) return { heaps: start, agentFirst };
  }
  throw new Error(`nim: no winning start in ${MAX_START_DRAWS} draws (the options should have refused these)`);
}

/** How many ordered positions can arise from the starts (an upper bound). */
export function orderedStateBound(options: StartOptions): number {
  if (options.heaps === 'random') return (options.maxHeap + 1) ** options.heapCount;
  return options.heaps.reduce((acc, h) => acc * (h + 1), 1);
}
