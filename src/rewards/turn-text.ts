/** Reading a recorded turn's text: the answer that produced its action and that answer's reasoning. */
import type { LlmCall, Turn } from '../core/trajectory.ts';

/** The turn's last LLM call: the answer whose tool call stepped the env (or failed to parse). */
export function finalCall(turn: Turn): LlmCall | null {
  return turn.calls.length > 0 ? turn.calls[turn.calls.length - 1] : null;
}

const THINK = /<think>([\s\S]*?)(?:<\/think>|$)/i;
const TOOL_CALL = /<tool_call>[\s\S]*?(?:<\/tool_call>|$)/gi;

/**
 * The reasoning segment of an answer: the backend's separate reasoning field when it has one, else the
 * `<think>...</think>` block, else the visible text with any `<tool_call>` blocks removed.
 */
export function reasoningText(call: LlmCall): string {
  const { reasoning, text } = call.completion;
  if (reasoning && reasoning.trim()) return reasoning.trim();
  const think = THINK.exec(text);
  if (think) return think[1].trim();
  return text.replace(TOOL_CALL, '').trim();
}

export function countWords(text: string): number {
  const words = text.match(/\S+/g);
  return words ? words.length : 0;
}
