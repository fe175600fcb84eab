/**
 * The warm start's demonstrations: episodes played by the real agent loop with the `random` scripted
 * policy (random legal actions written as proper tool calls), each LLM call turned into one
 * supervised sample: the prompt exactly as the embedded policy renders it (chat template with the
 * tools, generation prompt; the same system prompt and message scheme as every rollout) and, as the
 * completion, the assistant answer as the chat template writes it, through the end-of-turn token.
 * Only the completion is trained (loss mask), so the model learns the answer's format, and, since
 * the actions are uniformly random, nothing about which action is better.
 */
import type { Message, ToolSpec } from '../core/messages.ts';
import type { EnvSpec } from '../envs/env.ts';
import { randomPolicy } from '../policy/scripted.ts';
import { runRollouts } from '../rollout/rollouts.ts';
import type { ModelAssets } from './default-model.ts';
import type { LayoutSample } from './rl-batch.ts';
import { assistantCompletionText } from '../model/assistant-completion-text.ts';

export interface Demonstrations {
  /** One sequence per episode where its calls' ids are prefix-stable, else one per call. */
  samples: LayoutSample[];
  episodes: number;
  calls: number;
  /** Longest demonstrated completion, in tokens. */
  maxCompletionTokens: number;
  meanCompletionTokens: number;
  meanPromptTokens: number;
}

export interface DemoRequest<O extends Record<string, unknown>> {
  spec: EnvSpec<O>;
  options: O;
  assets: ModelAssets;
  /** Renders a prompt exactly as the sampling policy does (EmbeddedPolicy.promptIds). */
  promptIds: (messages: Message[], tools: ToolSpec[]) => number[];
  seeds: number[];
  maxTurns: number;
  /**
   * Also train on the prompt's tokens (the observations) after the first, not only on the answers:
   * the model learns to read the env's text (cards, sums, prices) as a language model would. The
   * answers are still random and no reward is in the sequences (each ends with its last answer, before
   * the outcome), so this teaches no strategy; it gives RL a model that can see the state.
   */
  languageModel: boolean;
}

/**
 * An episode's calls as one sequence when each call's prompt + completion is a prefix of the last
 * call's (the default template is prefix-stable), every answer masked in; otherwise one per call.
 */
export function packEpisode(calls: readonly { promptIds: number[]; completionIds: number[] }[]): LayoutSample[] {
  const single = (c: { promptIds: number[]; completionIds: number[] }): LayoutSample => {
    const tokens = [...c.promptIds, ...c.completionIds];
    return { tokens, lossMask: tokens.map((_, i) => (i >= c.promptIds.length ? 1 : 0)) };
  };
  if (calls.length === 0) return [];
  const last = calls[calls.length - 1];
  const tokens = [...last.promptIds, ...last.completionIds];
  const lossMask: (0 | 1)[] = tokens.map(() => 0);
  for (const c of calls) {
    const end = c.promptIds.length + c.completionIds.length;
    const stable = end <= tokens.length && c.promptIds.every((id, i) => tokens[i] === id) && c.completionIds.every((id, j) => tokens[c.promptIds.length + j] === id);
    if (!stable) return calls.map(single);
    lossMask.fill(1, c.promptIds.length, end);
  }
  return [{ tokens, lossMask }];
}

export async function warmStartDemonstrations<O extends Record<string, unknown>>(request: DemoRequest<O>): Promise<Demonstrations> {
  const { assets } = request;
  const result = await runRollouts({
    spec: request.spec,
    options: request.options,
    policy: randomPolicy(),
    seeds: request.seeds,
    episode: { maxTurns: request.maxTurns },
  });
  const samples: LayoutSample[] = [];
  let calls = 0;
  let maxCompletion = 0;
  let completionSum = 0;
  let promptSum = 0;
  for (const t of result.trajectories) {
    if (t.status === 'failed') throw new Error(`warm start: a random-policy episode failed (seed ${t.seed}): ${t.statusReason}`);
    const episodeCalls: { promptIds: number[]; completionIds: number[] }[] = [];
    for (const turn of t.turns) {
      for (const call of turn.calls) {
        // The agent loop appends the parsed answer right after the messages it sent.
        const answer = t.messages[call.messages.length];
        if (!answer || answer.role !== 'assistant') throw new Error('warm start: a recorded call is not followed by its answer');
        const promptIds = request.promptIds(call.messages, call.tools);
        const completionIds = assets.tokenizer.encode(assistantCompletionText(assets, call.messages, call.tools, answer));
        episodeCalls.push({ promptIds, completionIds });
        maxCompletion = Math.max(maxCompletion, completionIds.length);
        completionSum += completionIds.length;
        promptSum += promptIds.length;
      }
    }
    calls += episodeCalls.length;
    const packed = packEpisode(episodeCalls);
    samples.push(...(request.languageModel ? packed.map((p) => ({ tokens: p.tokens, lossMask: p.tokens.map((_, i) => (i === 0 ? 0 : 1)) })) : packed));
  }
  if (samples.length === 0) throw new Error('warm start: the demonstrations hold no policy call');
  return {
    samples,
    episodes: result.trajectories.length,
    calls,
    maxCompletionTokens: maxCompletion,
    meanCompletionTokens: completionSum / calls,
    meanPromptTokens: promptSum / calls,
  };
}
