/** Nim's `take` tool (heaps numbered from 1 as the observation shows them) and the check of a call. */
import type { ToolSpec } from '../../core/messages.ts';
import type { Action } from '../env.ts';
import type { NimMove } from './rules.ts';

export function nimTools(heapCount: number): ToolSpec[] {
  return [
    {
      name: 'take',
      description: 'Remove `count` objects (at least 1) from heap number `heap`.',
      parameters: {
        type: 'object',
        properties: {
          heap: { type: 'integer', minimum: 1, maximum: heapCount, description: 'heap number, as shown' },
          count: { type: 'integer', minimum: 1, description: 'how many objects to remove' },
        },
        required: ['heap', 'count'],
        additionalProperties: false,
      },
    },
  ];
}

export function takeAction(move: NimMove): Action {
  return { name: 'take', arguments: { heap: move.heap + 1, count: move.count } };
}

/** The move an action makes on these heaps, or why it is not legal. */
export function parseTake(heaps: readonly number[], action: Action): { move: NimMove } | { error: string } {
  if (action.name !== 'take') return { error: `unknown action '${action.name}': call take with heap and count` };
  const args = action.arguments ?? {};
  const extra = Object.keys(args).filter((k) => k !== 'heap' && k !== 'count');
  if (extra.length > 0) return { error: `take has only heap and count arguments (got ${extra.join(', ')})` };
  const { heap, count } = args;
  if (typeof heap !== 'number' || !Number.isInteger(heap) || heap < 1 || heap > heaps.length) {
    return { error: `heap must be an integer 1..${heaps.length}, got ${JSON.stringify(heap)}` };
  }
  const size = heaps[heap - 1];
  if (size === 0) return { error: `heap ${heap} is empty` };
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > size) {
    return { error: `count must be an integer 1..${size} (heap ${heap} has ${size}), got ${JSON.stringify(count)}` };
  }
  return { move: { heap: heap - 1, count } };
}
