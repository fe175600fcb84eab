/**
 * Normal-play Nim: players alternately remove objects from one heap; whoever takes the last
 * object wins. Bouton: the player to move loses iff the XOR (nim-sum) of the heap sizes is 0.
 */

/** A move on 0-based heap `heap` removing `count` objects. */
export interface NimMove {
  heap: number;
  count: number;
}

export function nimSum(heaps: readonly number[]): number {
  let x = 0;
  for (const h of heaps) x ^= h;
  return x;
}

export function isCleared(heaps: readonly number[]): boolean {
  return heaps.every((h) => h === 0);
}

/** Every legal move, heap by heap, smallest count first. */
export function legalMoves(heaps: readonly number[]): NimMove[] {
  const moves: NimMove[] = [];
  heaps.forEach((size, heap) => {
    for (let count = 1; count <= size; count++) moves.push({ heap, count });
  });
  return moves;
}

export function applyMove(heaps: readonly number[], move: NimMove): number[] {
  const next = [...heaps];
  next[move.heap] -= move.count;
  return next;
}

/** The move to a nim-sum of 0 (first heap that allows one), or null when the position is lost. */
export function boutonMove(heaps: readonly number[]): NimMove | null {
  const x = nimSum(heaps);
  if (x === 0) return null;
  for (let heap = 0; heap < heaps.length; heap++) {
    const target = heaps[heap] ^ x;
    if (target < heaps[heap]) return { heap, count: heaps[heap] - target };
  }
  throw new Error('unreachable: a nonzero nim-sum always has a heap with its top bit set');
}

/** From a lost position: take 1 from the (first) largest heap, which keeps the game long. */
export function stallingMove(heaps: readonly number[]): NimMove {
  let heap = 0;
  for (let i = 1; i < heaps.length; i++) if (heaps[i] > heaps[heap]) heap = i;
  if (heaps[heap] === 0) throw new Error('nim: no move from a cleared position');
  return { heap, count: 1 };
}

/** The optimal opponent's move: Bouton's when winning, otherwise stalling. */
export function perfectMove(heaps: readonly number[]): NimMove {
  return boutonMove(heaps) ?? stallingMove(heaps);
}
