/** The bandit's `pull` tool (arms numbered from 1 as the observation shows them) and the check of a call. */
import type { ToolSpec } from '../../core/messages.ts';
import type { Action } from '../env.ts';

export function banditTools(k: number): ToolSpec[] {
  return [
    {
      name: 'pull',
      description: 'Pull arm number `arm`; it pays 1 or 0.',
      parameters: {
        type: 'object',
        properties: { arm: { type: 'integer', minimum: 1, maximum: k, description: 'arm number, as shown' } },
        required: ['arm'],
        additionalProperties: false,
      },
    },
  ];
}

/** `arm` is 0-based here and 1-based in the action. */
export function pullAction(arm: number): Action {
  return { name: 'pull', arguments: { arm: arm + 1 } };
}

/** The 0-based arm an action pulls, or why it is not legal. */
export function parsePull(k: number, action: Action): { arm: number } | { error: string } {
  if (action.name !== 'pull') return { error: `unknown action '${action.name}': call pull with an arm number` };
  const args = action.arguments ?? {};
  const extra = Object.keys(args).filter((key) => key !== 'arm');
  if (extra.length > 0) return { error: `pull has only the arm argument (got ${extra.join(', ')})` };
  const { arm } = args;
  if (typeof arm !== 'number' || !Number.isInteger(arm) || arm < 1 || arm > k) {
    return { error: `arm must be an integer 1..${k}, got ${JSON.stringify(arm)}` };
  }
  return { arm: arm - 1 };
}
