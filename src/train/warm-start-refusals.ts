/**
 * Refused answers in the warm start's demonstrations (warmStart.refusals): at a share of the
 * decisions, the demonstrating policy first answers with an action the env refuses, so the
 * demonstration goes on as a real episode would: the env's feedback ("Invalid answer: … Try
 * again.") and then a legal answer. Only the legal answer is trained (warm-start-demos.ts masks the
 * refused one), so the model learns to answer after a refusal, which random legal demonstrations
 * never show. Without them, Nim's warm start (seed 1) answered 97 % of its retries illegally,
 * most with no parsable call at all, where 14 % of its first answers were refused.
 *
 * The refused action is a legal one with one number argument set past every legal value of it
 * (Nim: count 8 of a heap of 3; the bandit: arm 4 of 3), so the feedback is what a real episode
 * says of such an answer: the tool schema's bound, checked by the agent loop, or the env's own
 * message. A decision whose actions have no number argument gets no refusal.
 */
import { canonicalJson } from '../core/canonical.ts';
import { Rng } from '../core/random.ts';
import type { Action } from '../envs/env.ts';
import type { Policy } from '../policy/policy.ts';
import { toolCallText } from '../policy/scripted.ts';

/** The Rng stream of the refusal draws under each request's seed (the random policy's action uses stream 0). */
const REFUSAL_STREAM = 0x5ef;

/** `taken` with one number argument (drawn by `rng`) set past every legal action's value of it, or null when it has none. */
export function refusedAction(legal: readonly Action[], taken: Action, rng: Rng): Action | null {
  const numeric = Object.keys(taken.arguments).filter((k) => typeof taken.arguments[k] === 'number');
  if (numeric.length === 0) return null;
  const key = numeric[rng.int(numeric.length)];
  const values = legal.map((a) => a.arguments[key]).filter((v): v is number => typeof v === 'number');
  const past = Math.floor(Math.max(...values)) + 1 + rng.int(3);
  return { name: taken.name, arguments: { ...taken.arguments, [key]: past } };
}

/**
 * `base` (a scripted policy that reads the decision view) answering a `share` of the first attempts
 * at a decision with a refused action instead; the retry that follows gets `base`'s answer.
 */
export function refusingPolicy(base: Policy, share: number): Policy {
  if (!(share >= 0 && share <= 1)) throw new Error(`refusingPolicy: share must be in [0, 1], got ${share}`);
  // The conversations at which an answer was refused: a request that extends one by the refused
  // answer and its feedback (2 messages) is that decision's retry.
  const refusedAt = new Set<string>();
  return {
    ...base,
    async complete(request) {
      const view = request.view;
      const retry = request.messages.length >= 2 && refusedAt.has(canonicalJson(request.messages.slice(0, -2)));
      if (!view || retry || (request.n ?? 1) !== 1) return base.complete(request);
      const rng = new Rng(request.seed ?? 0, REFUSAL_STREAM);
      if (rng.next() >= share) return base.complete(request);
      const legal = view.legalActions();
      const refused = legal.length > 0 ? refusedAction(legal, legal[rng.int(legal.length)], rng) : null;
      if (!refused) return base.complete(request);
      refusedAt.add(canonicalJson(request.messages));
      const [completion] = await base.complete(request);
      return [{ ...completion, text: toolCallText(refused) }];
    },
  };
}
