/** Blackjack's two actions as tools, and the check of an action the agent sent. */
import type { ToolSpec } from '../../core/messages.ts';
import type { Action } from '../env.ts';

export type BlackjackMove = 'stick' | 'hit';

const NO_ARGUMENTS = { type: 'object', properties: {}, additionalProperties: false };

export const BLACKJACK_TOOLS: ToolSpec[] = [
  { name: 'stick', description: 'Stop taking cards; the dealer then plays out its hand.', parameters: NO_ARGUMENTS },
  { name: 'hit', description: 'Take one more card.', parameters: NO_ARGUMENTS },
];

export function moveAction(move: BlackjackMove): Action {
  return { name: move, arguments: {} };
}

/** Why `action` is not a blackjack move, or null. */
export function blackjackActionError(action: Action): string | null {
  if (action.name !== 'stick' && action.name !== 'hit') {
    return `unknown action '${action.name}': call stick or hit`;
  }
  const extra = Object.keys(action.arguments ?? {});
  if (extra.length > 0) return `${action.name} takes no arguments (got ${extra.join(', ')})`;
  return null;
}
