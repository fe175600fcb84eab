/**
 * Prefix stability (DESIGN.md rule 2): the turns of a conversation may be packed into one training
 * sequence only when, for every assistant turn k, the prompt the model saw (render of messages[:k]
 * with the generation prompt) is a prefix of the render that holds turn k, and that render is a
 * prefix of the render of the whole conversation. Qwen3's template fails this as soon as a new user
 * message follows an assistant turn with reasoning: it strips the reasoning from earlier turns.
 */
import type { Message } from '../core/messages.ts';
import type { ChatTemplate, RenderOptions } from './chat-template.ts';

export interface PrefixStabilityOptions extends Omit<RenderOptions, 'addGenerationPrompt'> {
  /**
   * The exact sampled text of assistant turns (by message index), end-of-turn token included. When
   * given, the render of that turn must also reproduce it right after its prompt: re-rendering parsed
   * tool calls or trimmed reasoning can differ from what was sampled.
   */
  completions?: Readonly<Record<number, string>>;
}

export type PrefixStability =
  | { stable: true; assistantTurns: number[] }
  | { stable: false; assistantTurns: number[]; messageIndex: number; reason: string };

function firstDifference(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function excerpt(text: string, at: number): string {
  return JSON.stringify(text.slice(Math.max(0, at - 20), at + 30));
}

/** Checks every assistant turn after the first message; says where and why it breaks. */
export function prefixStability(
  template: ChatTemplate,
  messages: readonly Message[],
  options: PrefixStabilityOptions = {},
): PrefixStability {
  const { completions, ...renderOptions } = options;
  const full = template.render(messages, { ...renderOptions, addGenerationPrompt: false });
  const assistantTurns = messages.flatMap((m, i) => (m.role === 'assistant' && i > 0 ? [i] : []));
  for (const k of assistantTurns) {
    const prompt = template.render(messages.slice(0, k), { ...renderOptions, addGenerationPrompt: true });
    const withTurn = template.render(messages.slice(0, k + 1), { ...renderOptions, addGenerationPrompt: false });
    const unstable = (reason: string): PrefixStability => ({ stable: false, assistantTurns, messageIndex: k, reason });
    if (!withTurn.startsWith(prompt)) {
      const at = firstDifference(prompt, withTurn);
      return unstable(`the prompt of turn ${k} is not a prefix of its own render: ${excerpt(prompt, at)} vs ${excerpt(withTurn, at)}`);
    }
    const sampled = completions?.[k];
    if (sampled !== undefined && !withTurn.startsWith(prompt + sampled)) {
      const at = firstDifference(prompt + sampled, withTurn);
      return unstable(`turn ${k} renders differently from what was sampled: ${excerpt(prompt + sampled, at)} vs ${excerpt(withTurn, at)}`);
    }
    if (!full.startsWith(withTurn)) {
      const at = firstDifference(withTurn, full);
      return unstable(`turn ${k} renders differently once later messages follow: ${excerpt(withTurn, at)} vs ${excerpt(full, at)}`);
    }
  }
  return { stable: true, assistantTurns };
}

/** True when the conversation's turns can be packed into one sequence (see `prefixStability`). */
export function isPrefixStable(template: ChatTemplate, messages: readonly Message[], options: PrefixStabilityOptions = {}): boolean {
  return prefixStability(template, messages, options).stable;
}
