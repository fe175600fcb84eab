/**
 * Explored answers (the dense estimator's `explore`): at each decision, up to `count` legal actions
 * that none of its sampled answers took, each written as the played answer would read had it taken
 * that action (the chat template's render, as the warm start writes its demonstrations), join the
 * decision's group, scored by the exact expected reward the env gave that action at the decision
 * (DecisionSamples.actionValues).
 *
 * Why: a decision whose k answers all take one action ties, and trains nothing. On the bandit at
 * β 0.03, 79 of a step's 80 decisions tied from step 40 on, and the greedy policy did not change
 * again (docs/results.md, "Bandit"). A policy gradient from the policy's own samples cannot leave such
 * a settled choice, even where another action scores better: a rare action's expected gradient is
 * weighted by its probability. An explored answer trains with its full advantage whatever its
 * probability. It is not importance-weighted, and that bias is the point: it moves each decision
 * toward the action with the highest exact expected reward, the one-step improvement that the
 * dense estimator's values define.
 *
 * Its tokens were never sampled, so they have no sampling logprobs: the loss anchors their ratio on
 * the policy being trained (ratio 1, `explored` in rl-batch.ts and loss-rl.ts) and leaves them out of
 * the KL, whose k3 estimate holds only for tokens the policy sampled.
 *
 * The actions are drawn with the step's Rng, so a resumed run explores the same answers.
 */
import type { DecisionSampleRef } from '../advantage/from-decisions.ts';
import type { Completion } from '../core/completion.ts';
import type { Rng } from '../core/random.ts';
import type { Trajectory } from '../core/trajectory.ts';
import { assistantCompletionText, type CompletionTextAssets } from '../model/assistant-completion-text.ts';
import { actionTaken, answerTaking } from './warm-start-demos.ts';

export interface ExploredAnswers {
  answers: DecisionSampleRef[];
  /** Decisions that recorded their action values but could not be explored: the played answer took no single legal action. */
  skipped: number;
}

/** A completion the trainer wrote: the played answer's prompt, the rendered ids, no sampling logprobs (placeholders of 0). */
function writtenCompletion(played: Completion, text: string, ids: number[]): Completion {
  return {
    text,
    promptTokenIds: played.promptTokenIds,
    completionTokenIds: ids,
    logprobs: ids.map(() => 0),
    tokenIdsExact: true,
    finishReason: 'tool_calls',
    modelId: played.modelId,
    policyVersion: played.policyVersion,
  };
}

export function exploredAnswers(trajectories: readonly Trajectory[], count: number, rng: Rng, assets: CompletionTextAssets): ExploredAnswers {
  const answers: DecisionSampleRef[] = [];
  let skipped = 0;
  for (const t of trajectories) {
    t.turns.forEach((turn, k) => {
      turn.calls.forEach((call, c) => {
        const values = call.decision?.actionValues;
        if (!values || values.length === 0) return;
        // The agent loop appends the parsed answer right after the messages it sent.
        const answer = t.messages[call.messages.length];
        const legal = values.map((v) => v.action);
        const taken = answer?.role === 'assistant' ? actionTaken(answer, legal) : null;
        if (!taken || call.completion.promptTokenIds === null) {
          skipped++;
          return;
        }
        const completions = [call.completion, ...call.decision!.alternatives];
        const sampled = new Set(completions.map((x) => x.completionTokenIds?.join(',')));
        // The other actions in a random order; the first `count` whose answer no sample wrote are taken.
        const order = values.filter((v) => v.action !== taken);
        for (let i = order.length - 1; i > 0; i--) {
          const j = rng.int(i + 1);
          [order[i], order[j]] = [order[j], order[i]];
        }
        let added = 0;
        for (const { action, reward } of order) {
          if (added === count) break;
          const text = assistantCompletionText(assets, call.messages, call.tools, answerTaking(answer!, taken, action));
          const ids = assets.tokenizer.encode(text);
          if (sampled.has(ids.join(','))) continue;
          answers.push({
            trajectoryId: t.id,
            turn: k,
            call: c,
            sample: completions.length + added,
            completion: writtenCompletion(call.completion, text, ids),
            reward,
            invalid: false,
            explored: true,
          });
          added++;
        }
      });
    });
  }
  return { answers, skipped };
}
