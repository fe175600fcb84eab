/**
 * Policies that answer from the text alone, as an LLM does (no decision view, no action distribution):
 * they read the hand from the last observation in the messages and write a tool call, or junk.
 */
import type { Completion } from '../../src/core/completion.ts';
import type { Message } from '../../src/core/messages.ts';
import type { Policy, PolicyRequest } from '../../src/policy/policy.ts';

export interface SeenHand {
  playerSum: number;
  usableAce: boolean;
  dealerCard: number;
}

/** The hand in the last user or tool message, as the env writes it ("... (sum 16, no usable ace). Dealer shows: 9."). */
export function readHand(messages: readonly Message[]): SeenHand {
  const last = [...messages].reverse().find((m) => m.role === 'user' || m.role === 'tool');
  const text = typeof last?.content === 'string' ? last.content : '';
  const hand = /\(sum (\d+), (usable ace|no usable ace)\)\. Dealer shows: (A|\d+)\./.exec(text);
  if (!hand) throw new Error(`no hand in ${JSON.stringify(text)}`);
  return { playerSum: Number(hand[1]), usableAce: hand[2] === 'usable ace', dealerCard: hand[3] === 'A' ? 1 : Number(hand[3]) };
}

function completion(text: string, name: string): Completion {
  return { text, promptTokenIds: null, completionTokenIds: null, logprobs: null, tokenIdsExact: false, finishReason: 'stop', modelId: name, policyVersion: 0 };
}

/** A text policy: `answer` gives the move (or any other text) for the hand and the whole request. */
export function textPolicy(name: string, answer: (hand: SeenHand, request: PolicyRequest) => 'stick' | 'hit' | string): Policy & { requests: PolicyRequest[] } {
  const requests: PolicyRequest[] = [];
  return {
    name,
    contextLength: null,
    requests,
    complete(request) {
      requests.push(request);
      const move = answer(readHand(request.messages), request);
      const text = move === 'stick' || move === 'hit' ? `<tool_call>{"name": "${move}", "arguments": {}}</tool_call>` : move;
      return Promise.resolve(Array.from({ length: request.n ?? 1 }, () => completion(text, name)));
    },
  };
}
