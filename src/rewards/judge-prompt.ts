/**
 * The judge's prompt, in the spirit of ART's RULER: the messages every trajectory of the group shares
 * are shown once, then each trajectory's own continuation under a numbered label, then the rubric and
 * the JSON answer asked for.
 */
import type { Message } from '../core/messages.ts';

export const DEFAULT_RUBRIC = [
  'Score each trajectory from 0 to 1 by how well it achieves the goal the conversation sets.',
  'Judge them against each other: a better trajectory gets a higher score than a worse one.',
  'A trajectory that achieves the goal scores higher than one that does not, however it goes about it.',
  'Between two that both achieve it, the one that does so more efficiently and with fewer errors scores higher.',
].join('\n');

/** Messages equal in every trajectory, from the start. */
export function sharedPrefixLength(histories: readonly Message[][]): number {
  const first = histories[0] ?? [];
  let n = 0;
  for (; n < first.length; n++) {
    const key = JSON.stringify(first[n]);
    if (!histories.every((h) => h.length > n && JSON.stringify(h[n]) === key)) break;
  }
  return n;
}

function render(messages: readonly Message[]): string {
  return messages
    .map((m) => {
      const calls = m.toolCalls?.length ? `\n[tool calls: ${m.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.arguments)})`).join(', ')}]` : '';
      return `[${m.role}${m.name ? ` ${m.name}` : ''}]\n${m.content}${calls}`;
    })
    .join('\n\n');
}

export function judgeMessages(histories: readonly Message[][], rubric: string): Message[] {
  const shared = sharedPrefixLength(histories);
  const context = histories[0].slice(0, shared);
  const labelled = histories.map((h, i) => `<trajectory id="${i + 1}">\n${render(h.slice(shared))}\n</trajectory>`).join('\n\n');
  const ids = histories.map((_, i) => `"${i + 1}"`).join(', ');
  const system = [
    'You are a careful judge of AI agent trajectories. Several agents started from the same context and each produced a trajectory.',
    `Rubric:\n${rubric}`,
    `Answer with JSON only, in this shape: {"scores": [{"trajectory_id": "1", "explanation": "...", "score": 0.5}, ...]}, one entry for each of the trajectory ids ${ids}, scores between 0 and 1.`,
  ].join('\n\n');
  const user = [
    context.length > 0 ? `<context>\n${render(context)}\n</context>` : '<context>\n(none shared)\n</context>',
    labelled,
  ].join('\n\n');
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}
