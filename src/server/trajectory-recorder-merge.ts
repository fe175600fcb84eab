/**
 * Merging an agent's LLM calls into conversations. Agents resend the whole conversation on every
 * call, so a call whose messages extend the main conversation is its next turn (the main
 * conversation becomes those messages plus the answer); one that extends an additional history
 * grows that history; anything else (a sub-agent, a parallel branch, a summariser) starts a new
 * additional history. Without this merge each call would be a separate conversation and the
 * episode's structure would be lost.
 */
import { canonical } from '../core/canonical.ts';
import type { Message } from '../core/messages.ts';

/** Which conversation a call continued: 0 the main one, k ≥ 1 additionalHistories[k - 1]. */
export type ConversationIndex = number;

/** What identifies a message for matching: agents echo assistant messages back with small changes (ids, null content). */
function key(m: Message): string {
  const calls = (m.toolCalls ?? []).map((c) => [c.name, canonical(c.arguments)]);
  return JSON.stringify([m.role, m.content, calls, m.role === 'tool' ? (m.toolCallId ?? '') : '']);
}

/** True when `prefix` (non-empty) is a prefix of `messages`, message by message. */
export function extendsConversation(messages: readonly Message[], prefix: readonly Message[]): boolean {
  if (prefix.length === 0 || prefix.length > messages.length) return false;
  for (let i = 0; i < prefix.length; i++) if (key(prefix[i]) !== key(messages[i])) return false;
  return true;
}

export interface Conversations {
  messages: Message[];
  additionalHistories: Message[][];
}

/**
 * Adds one call (its prompt messages and the answer) to the conversations, in place, and says
 * which one it continued. The first call starts the main conversation.
 */
export function mergeCall(conversations: Conversations, prompt: readonly Message[], answer: Message): ConversationIndex {
  const grown = [...prompt, answer];
  if (conversations.messages.length === 0 || extendsConversation(prompt, conversations.messages)) {
    conversations.messages = grown;
    return 0;
  }
  const k = conversations.additionalHistories.findIndex((history) => extendsConversation(prompt, history));
  if (k >= 0) {
    conversations.additionalHistories[k] = grown;
    return k + 1;
  }
  conversations.additionalHistories.push(grown);
  return conversations.additionalHistories.length;
}
