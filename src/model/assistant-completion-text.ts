/**
 * The completion text of an assistant message: the chat template's render of it after the
 * generation prompt, through the end-of-turn token. What a model must generate to give that answer
 * (the warm start's demonstrations; re-tokenising a server's answer).
 */
import type { Message, ToolSpec } from '../core/messages.ts';
import type { ChatTemplate } from './chat-template.ts';
import type { Tokenizer } from './tokenizer/tokenizer.ts';

/** What the render needs of a model: its template, tokenizer and end-of-turn ids. */
export interface CompletionTextAssets {
  chatTemplate: ChatTemplate;
  tokenizer: Tokenizer;
  stopTokenIds: readonly number[];
}

export function assistantCompletionText(assets: CompletionTextAssets, messages: Message[], tools: ToolSpec[], answer: Message): string {
  const before = assets.chatTemplate.render(messages, { tools, addGenerationPrompt: true });
  const after = assets.chatTemplate.render([...messages, answer], { tools });
  if (!after.startsWith(before)) {
    throw new Error('the chat template does not render an assistant answer as a continuation of its generation prompt');
  }
  const rest = after.slice(before.length);
  const stops = assets.stopTokenIds.map((id) => assets.tokenizer.decode([id]));
  let end = -1;
  for (const stop of stops) {
    const at = rest.indexOf(stop);
    if (at !== -1 && (end === -1 || at + stop.length < end)) end = at + stop.length;
  }
  if (end === -1) throw new Error(`the rendered answer has no end-of-turn token (${stops.join(', ')})`);
  return rest.slice(0, end);
}
