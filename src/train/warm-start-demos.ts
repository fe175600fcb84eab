/**
 * The warm start's demonstrations: episodes played by the real agent loop with the `random` scripted
 * policy (random legal actions written as proper tool calls), each LLM call turned into one
 * supervised sample: the prompt exactly as the embedded policy renders it (chat template with the
 * tools, generation prompt; the same system prompt and message scheme as every rollout) and, as the
 * completion, the assistant answer as the chat template writes it, through the end-of-turn token.
 * Only the completion is trained (loss mask), so the model learns the answer's format and nothing
 * about which action is better.
 *
 * "Nothing" needs care, because RL's KL term holds the policy near the warm start: a warm start that
 * prefers one action skews every state's greedy choice. Two sources of such a preference, both
 * measured on Blackjack (P(stick) at the decisive token, the same in every state):
 * - Leaving out the episodes too long for a row keeps the short ones, and an episode is long BECAUSE
 *   of its actions (hit, hit, hit): 49.6 % of 1,000 demonstrated answers stick, 56.7 % of those in
 *   episodes that fit 128 tokens. So a long episode is cut at a call boundary instead (the calls that
 *   fit are kept; whether a call is kept depends only on what came before it).
 * - The rest of the loss: with languageModel the observations' tokens far outnumber the answers',
 *   and the balance between actions drifts with them (P(stick) 0.41–0.62 by seed, the same in every
 *   state, even when every batch also showed every action). So the warm start ends with a few
 *   steps on the answers alone, every legal action's answer at each decision side by side
 *   (answerGroup): each batch then shows each action equally often in each state, and its
 *   gradient pulls the choice toward uniform rather than toward whatever a batch happened to sample.
 */
import { canonicalJson } from '../core/canonical.ts';
import type { Message, ToolSpec } from '../core/messages.ts';
import type { Action, EnvSpec } from '../envs/env.ts';
import type { Policy } from '../policy/policy.ts';
import { randomPolicy } from '../policy/scripted.ts';
import { runRollouts } from '../rollout/rollouts.ts';
import type { ModelAssets } from './default-model.ts';
import type { LayoutSample } from './rl-batch.ts';
import { assistantCompletionText } from '../model/assistant-completion-text.ts';
import { refusingPolicy } from './warm-start-refusals.ts';

export interface DemoCall {
  promptIds: number[];
  completionIds: number[];
  /** An answer the env refused (warm-start-refusals.ts): never trained, only read before its retry. */
  refused?: true;
  /**
   * The answers of the other legal actions at this decision (absent: none demonstrated). Encoded on
   * first use: the warm start trains only a few thousand decisions' worth, and encoding every one
   * up front cost a 10-pull bandit 15 s of its 34 s of demonstrations.
   */
  otherCompletionIds?: () => number[][];
}

/** Decisions with more legal actions than this demonstrate only the sampled one (each costs a sequence). */
export const MAX_DEMONSTRATED_ACTIONS = 16;

export interface Demonstrations {
  /** Each episode's calls, in order. */
  episodeCalls: DemoCall[][];
  /** Observations trained too (DemoRequest.languageModel). */
  languageModel: boolean;
  episodes: number;
  calls: number;
  /** Calls whose answer the env refused (DemoRequest.refusals), each followed by its retry. */
  refusedCalls: number;
  /** Answers of the legal actions not taken (DemoCall.otherCompletionIds), over all calls. */
  otherAnswers: number;
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
  /** Decisions with more legal actions than this demonstrate only the sampled one (default MAX_DEMONSTRATED_ACTIONS). */
  maxOtherActions?: number;
  /**
   * Which scripted policy plays the demonstrations (default: random). Only the random policy records
   * the other legal answers, so with another policy no answer groups are made. Any other policy
   * teaches its choices: for diagnostics (bench/oracle-imitation.ts), never a real run's warm start.
   */
  demoPolicy?: Policy;
  /**
   * Share of the decisions whose first answer is refused (warm-start-refusals.ts), in an env that
   * lets a refused answer be retried; default 0.
   */
  refusals?: number;
}

/** Whether a call's sequence (prompt + completion) has at most `maxTokens` tokens. */
export const callFits = (call: DemoCall, maxTokens: number): boolean => call.promptIds.length + call.completionIds.length <= maxTokens;

/** A call's prompt then an answer: the answer alone trained, or with `languageModel` every token after the first. */
const oneCall = (promptIds: readonly number[], completionIds: readonly number[], languageModel = false): LayoutSample => {
  const tokens = [...promptIds, ...completionIds];
  return { tokens, lossMask: tokens.map((_, i) => (i >= (languageModel ? 1 : promptIds.length) ? 1 : 0)) };
};

/**
 * An episode's calls as one sequence when each call's prompt + completion is a prefix of the last
 * call's (the default template is prefix-stable), every answer masked in; otherwise one per call.
 * With `languageModel` every token after the first is trained. Refused answers never are: in one
 * sequence their tokens are masked out, and one per call a refused call has no sequence and the
 * calls after it train their answers alone (their prompts hold the refused answer, wherever the
 * template put it). Only the calls whose sequence (prompt + completion) has at most `maxTokens`
 * tokens are kept: the first ones of a prefix-stable episode (a later call's sequence holds the
 * earlier ones).
 */
export function packEpisode(allCalls: readonly DemoCall[], maxTokens = Infinity, languageModel = false): LayoutSample[] {
  const calls = allCalls.filter((c) => callFits(c, maxTokens));
  if (calls.length === 0) return [];
  const last = calls[calls.length - 1];
  const tokens = [...last.promptIds, ...last.completionIds];
  const lossMask: (0 | 1)[] = tokens.map((_, i) => (languageModel && i > 0 ? 1 : 0));
  for (const c of calls) {
    const end = c.promptIds.length + c.completionIds.length;
    const stable = end <= tokens.length && c.promptIds.every((id, i) => tokens[i] === id) && c.completionIds.every((id, j) => tokens[c.promptIds.length + j] === id);
    if (!stable) {
      const firstRefused = calls.findIndex((r) => r.refused);
      return calls.flatMap((c, i) => (c.refused ? [] : [oneCall(c.promptIds, c.completionIds, languageModel && (firstRefused === -1 || i < firstRefused))]));
    }
    lossMask.fill(c.refused ? 0 : 1, c.promptIds.length, end);
  }
  return [{ tokens, lossMask }];
}

/** The demonstrations as training sequences of at most `maxTokens` tokens (packEpisode, with the demonstrations' languageModel). */
export function demonstrationSamples(demos: Demonstrations, maxTokens = Infinity): LayoutSample[] {
  return demos.episodeCalls.flatMap((calls) => packEpisode(calls, maxTokens, demos.languageModel));
}

/**
 * Every legal action's answer at one demonstrated decision (the taken answer first, then the others;
 * each a one-call sequence whose answer alone is trained): a batch of whole groups shows every
 * action equally often in each state. null when the decision demonstrated no other action or a
 * sequence does not fit `maxTokens`.
 */
export function answerGroup(call: DemoCall, maxTokens = Infinity): LayoutSample[] | null {
  const others = call.otherCompletionIds?.() ?? [];
  const group = [call.completionIds, ...others].map((ids) => oneCall(call.promptIds, ids));
  return others.length > 0 && group.every((s) => s.tokens.length <= maxTokens) ? group : null;
}

/** `f`, computed on the first call and kept. */
function once<T>(f: () => T): () => T {
  let value: { v: T } | null = null;
  return () => (value ??= { v: f() }).v;
}

const messagesKey = (messages: readonly Message[]): string => canonicalJson(messages);

/**
 * The random policy, recording the legal actions it chose among, by the messages it was asked with
 * (the same conversation so far is taken to allow the same actions; an answer whose action is not
 * among those recorded gets no others, otherAnswers).
 */
function recordingRandomPolicy(): { policy: Policy; legalActions: Map<string, Action[]> } {
  const base = randomPolicy();
  const legalActions = new Map<string, Action[]>();
  const policy: Policy = {
    ...base,
    complete: (request) => {
      if (request.view) legalActions.set(messagesKey(request.messages), request.view.legalActions());
      return base.complete(request);
    },
  };
  return { policy, legalActions };
}

const sameValue = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

/** The legal action an answer takes (its one call's name and the action's arguments), or null when it takes none or several. */
export function actionTaken(answer: Message, legal: readonly Action[]): Action | null {
  const call = answer.toolCalls?.length === 1 ? answer.toolCalls[0] : null;
  if (!call) return null;
  return legal.find((a) => a.name === call.name && Object.entries(a.arguments).every(([k, v]) => k in call.arguments && sameValue(call.arguments[k], v))) ?? null;
}

/**
 * The answer as it would read had it taken `action` instead of `taken` (actionTaken): the same
 * message with the call's action replaced; its arguments no legal action has (report answers) kept.
 */
export function answerTaking(answer: Message, taken: Action, action: Action): Message {
  const call = answer.toolCalls![0];
  const extra = Object.fromEntries(Object.entries(call.arguments).filter(([k]) => !(k in taken.arguments)));
  return { ...answer, toolCalls: [{ ...call, name: action.name, arguments: { ...action.arguments, ...extra } }] };
}

/**
 * The answer as it would read had the policy taken each other legal action (answerTaking). None when
 * the answer is not one call of a listed action, or the decision has too many actions.
 */
export function otherAnswers(answer: Message, legal: readonly Action[], maxActions = MAX_DEMONSTRATED_ACTIONS): Message[] {
  const taken = legal.length > maxActions ? null : actionTaken(answer, legal);
  if (!taken) return [];
  return legal.filter((a) => a !== taken).map((a) => answerTaking(answer, taken, a));
}

export async function warmStartDemonstrations<O extends Record<string, unknown>>(request: DemoRequest<O>): Promise<Demonstrations> {
  const { assets } = request;
  const random = request.demoPolicy ? null : recordingRandomPolicy();
  const demonstrating = request.demoPolicy ?? random!.policy;
  const rule = request.spec.create(request.options).invalidAction;
  const refusals = rule.mode === 'retry' && rule.maxRetries > 0 ? (request.refusals ?? 0) : 0;
  const policy = refusals > 0 ? refusingPolicy(demonstrating, refusals) : demonstrating;
  const result = await runRollouts({
    spec: request.spec,
    options: request.options,
    policy,
    seeds: request.seeds,
    episode: { maxTurns: request.maxTurns },
  });
  const episodeCalls: DemoCall[][] = [];
  let calls = 0;
  let refusedCalls = 0;
  let others = 0;
  let maxCompletion = 0;
  let completionSum = 0;
  let promptSum = 0;
  for (const t of result.trajectories) {
    if (t.status === 'failed') throw new Error(`warm start: a ${policy.name}-policy episode failed (seed ${t.seed}): ${t.statusReason}`);
    const episode: DemoCall[] = [];
    for (const turn of t.turns) {
      for (const call of turn.calls) {
        // The agent loop appends the parsed answer right after the messages it sent.
        const answer = t.messages[call.messages.length];
        if (!answer || answer.role !== 'assistant') throw new Error('warm start: a recorded call is not followed by its answer');
        const promptIds = request.promptIds(call.messages, call.tools);
        const completionOf = (message: Message) => assets.tokenizer.encode(assistantCompletionText(assets, call.messages, call.tools, message));
        const completionIds = completionOf(answer);
        if (call.invalid) {
          refusedCalls++;
          episode.push({ promptIds, completionIds, refused: true });
        } else {
          const legal = random?.legalActions.get(messagesKey(call.messages));
          const otherMessages = legal ? otherAnswers(answer, legal, request.maxOtherActions) : [];
          others += otherMessages.length;
          episode.push({ promptIds, completionIds, ...(otherMessages.length > 0 ? { otherCompletionIds: once(() => otherMessages.map(completionOf)) } : {}) });
        }
        maxCompletion = Math.max(maxCompletion, completionIds.length);
        completionSum += completionIds.length;
        promptSum += promptIds.length;
      }
    }
    calls += episode.length;
    if (episode.length > 0) episodeCalls.push(episode);
  }
  if (calls === 0) throw new Error('warm start: the demonstrations hold no policy call');
  return {
    episodeCalls,
    languageModel: request.languageModel,
    episodes: result.trajectories.length,
    calls,
    refusedCalls,
    otherAnswers: others,
    maxCompletionTokens: maxCompletion,
    meanCompletionTokens: completionSum / calls,
    meanPromptTokens: promptSum / calls,
  };
}
