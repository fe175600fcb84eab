/**
 * Packing (DESIGN.md rule 2): the calls of one conversation share one sequence only where the
 * template was prefix-stable for it. That is checked on the ids themselves: call j may extend the
 * sequence ending with call i only if j's prompt ids start with i's prompt ids + i's completion
 * ids. Then every earlier completion sits in j's prompt at the very positions it was sampled at,
 * so one forward pass scores them all. A template that rewrites history (Qwen3 strips <think>
 * from earlier turns) fails the check, and the conversation falls back to one sample per call.
 */
import type { TrainableCall } from './samples-calls.ts';

export interface Packing {
  /** Each inner list becomes one sample; calls keep their order. */
  sequences: TrainableCall[][];
  /** Times a call could not extend the sequence before it because the ids were not a prefix. */
  fallbacks: number;
  /** Times a call started a new sequence only because of maxPackedTokens. */
  limitSplits: number;
}

export function startsWith(ids: readonly number[], prefix: readonly number[], offset = 0): boolean {
  if (ids.length < offset + prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[offset + i] !== prefix[i]) return false;
  return true;
}

/** Whether `next`'s prompt ids start with `prev`'s prompt ids followed by its completion ids. */
export function extendsCall(next: TrainableCall, prev: TrainableCall): boolean {
  return startsWith(next.promptIds, prev.promptIds) && startsWith(next.promptIds, prev.completionIds, prev.promptIds.length);
}

/** The length of a sequence ending with `call`: its prompt already holds everything before it. */
export const sequenceLength = (call: TrainableCall): number => call.promptIds.length + call.completionIds.length;

/** Groups one conversation's trainable calls (in order) into sequences. */
export function packConversation(
  calls: readonly TrainableCall[],
  options: { pack: boolean; maxPackedTokens: number | null },
): Packing {
  const packing: Packing = { sequences: [], fallbacks: 0, limitSplits: 0 };
  let current: TrainableCall[] | null = null;
  for (const call of calls) {
    const last = current?.at(-1);
    if (current && last && options.pack) {
      if (!extendsCall(call, last)) {
        packing.fallbacks++;
      } else if (options.maxPackedTokens !== null && sequenceLength(call) > options.maxPackedTokens) {
        packing.limitSplits++;
      } else {
        current.push(call);
        continue;
      }
    }
    current = [call];
    packing.sequences.push(current);
  }
  return packing;
}
