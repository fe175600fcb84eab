/**
 * The agent loop: one episode of an env played by a policy, every turn recorded (observation, each
 * LLM call, the action, feedback, reward parts, timings). Env and policy failures never escape:
 * they end the trajectory as `failed` with the reason.
 *
 * A turn is one decision. Within it the policy may be called several times: after informational
 * calls (answered by env.inform, up to maxInformationalCalls) and, with the env's `retry` rule,
 * after an invalid answer (up to maxRetries). An answer carries at most one action call; one with
 * only informational calls is answered and the policy is asked again. Prompts follow the scheme in
 * prompt.ts. Env outputs are checked with envResetSchema / envStepSchema; the checked objects
 * themselves are recorded, so an env must not change them in place afterwards.
 */
import type { Completion } from '../core/completion.ts';
import { newId } from '../core/ids.ts';
import type { Message, ToolCall, ToolSpec } from '../core/messages.ts';
import { Rng } from '../core/random.ts';
import { describeZodError, envResetSchema, envStepSchema } from '../core/schemas.ts';
import type { DecisionSamples, ParseErrorKind, Trajectory, TrajectoryStatus, Turn } from '../core/trajectory.ts';
import { sampledActionRewards } from '../envs/action-rewards.ts';
import type { Action, Env, EnvReset, EnvStep } from '../envs/env.ts';
import { callSampling, type Policy, type PolicyRequest } from '../policy/policy.ts';
import { callPolicy, errorText } from './call-policy.ts';
import { isoNow } from './iso-now.ts';
import type { EpisodeSettings } from './episode-settings.ts';
import { episodeMetrics, newCounts } from './episode-metrics.ts';
import { episodeOutcome } from './outcome.ts';
import { parseCompletion } from './parse-tool-calls.ts';
import {
  assistantMessage,
  invalidAnswerText,
  observationMessage,
  systemMessage,
  cachedSystemPrompt,
  toolResultMessage,
} from './prompt.ts';
import { envRewardParts, INVALID_ACTION_PART, scoreTurn } from './turn-rewards.ts';

export interface EpisodeInput extends Omit<EpisodeSettings, 'decisionSamples'> {
  /** Answers drawn per decision of a dense env (EpisodeSettings.decisionSamples); default 1. */
  decisionSamples?: number;
  /** The env instance, or a factory (a factory that throws fails the episode instead of the caller). */
  env: Env | (() => Env);
  /** The env's name, recorded on the trajectory. */
  envName: string;
  /** The env's description of the task (EnvSpec.instructions(options)). */
  instructions: string;
  policy: Policy;
  seed: number;
  /** Index of this sample within its group; also selects the policy's seed stream. */
  sample?: number;
  id?: string;
  runId?: string | null;
  groupId?: string | null;
}

/** The stream of per-call policy seeds under the episode seed (streams below it are the env's to use). */
const POLICY_SEED_STREAM = 1000;

/**
 * Why an answer is not a legal action: a parse failure (recorded as the turn's parseError), more
 * than one action call, too many informational calls, or an action env.validate refused (kept in
 * turn.actions, with turn.invalid set).
 */
interface InvalidAnswer {
  kind: ParseErrorKind | 'multiple_actions' | 'too_many_informational_calls' | 'illegal_action';
  message: string;
  action?: ToolCall;
}

/** Thrown for a broken contract (an env returning junk); ends the episode as failed with its message. */
class EpisodeFailure extends Error {}

export async function runEpisode(input: EpisodeInput): Promise<Trajectory> {
  const episode = new Episode(input);
  try {
    await episode.play();
  } catch (error) {
    episode.fail(errorText(error));
  }
  return episode.record();
}

function newTurn(index: number, observation: string): Turn {
  return {
    index,
    observation,
    calls: [],
    actions: [],
    informational: [],
    parseError: null,
    invalid: false,
    feedback: '',
    reward: 0,
    rewardParts: {},
    done: false,
    truncated: false,
    info: {},
    timings: { policyMs: 0, envMs: 0 },
  };
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown })?.then === 'function';
}

class Episode {
  private readonly startedAt = isoNow();
  private readonly messages: Message[] = [];
  private readonly turns: Turn[] = [];
  private tools: ToolSpec[] = [];
  private informationalNames: ReadonlySet<string> = new Set();
  private status: TrajectoryStatus = 'completed';
  private statusReason: string | null = null;
  private ended = false;
  private envReturn = 0;
  private readonly seeds: Rng;
  private readonly contextLimit: number;
  private readonly policyVersions: number[] = [];
  private readonly counts = newCounts();
  private env!: Env;

  constructor(private readonly input: EpisodeInput) {
    this.seeds = new Rng(input.seed, POLICY_SEED_STREAM + (input.sample ?? 0));
    this.contextLimit = Math.min(input.contextBudget ?? Infinity, input.policy.contextLength ?? Infinity);
  }

  async play(): Promise<void> {
    const env = typeof this.input.env === 'function' ? this.createEnv(this.input.env) : this.input.env;
    this.env = env;
    const rawReset = await this.envCall('reset', null, () => env.reset(this.input.seed));
    const check = envResetSchema.safeParse(rawReset);
    if (!check.success) throw new EpisodeFailure(`env.reset returned an invalid value: ${describeZodError(check.error)}`);
    // The checked value itself, not zod's copy: tools keep their identity (shared by every recorded call).
    const reset = rawReset as EnvReset;
    this.tools = reset.tools;
    const informational = this.tools.filter((tool) => tool.informational).map((tool) => tool.name);
    if (informational.length > 0 && typeof env.inform !== 'function') {
      throw new EpisodeFailure(`the env offers informational tools (${informational.join(', ')}) but has no inform() method`);
    }
    this.informationalNames = new Set(informational);
    this.messages.push(systemMessage(cachedSystemPrompt(this.input.instructions, this.tools)));
    this.messages.push(observationMessage(reset.observation));

    const maxTurns = Math.min(this.input.maxTurns, env.maxTurns ?? Infinity);
    let observation = reset.observation;
    while (!this.ended) {
      if (this.turns.length >= maxTurns) {
        this.end('truncated', `max turns (${maxTurns}) reached`);
        break;
      }
      const turn = newTurn(this.turns.length, observation);
      turn.state = await this.recordedState(turn);
      this.turns.push(turn);
      await this.playTurn(turn);
      observation = turn.feedback;
    }
  }

  private createEnv(factory: () => Env): Env {
    try {
      return factory();
    } catch (error) {
      throw new EpisodeFailure(`creating the env failed: ${errorText(error)}`);
    }
  }

  fail(reason: string): void {
    this.status = 'failed';
    this.statusReason = reason;
    this.ended = true;
  }

  private end(status: TrajectoryStatus, reason: string | null): void {
    this.status = status;
    this.statusReason = reason;
    this.ended = true;
  }

  /** Asks the policy until the decision is made (an action stepped the env) or the episode ends. */
  private async playTurn(turn: Turn): Promise<void> {
    const rule = this.env.invalidAction;
    let invalidAnswers = 0;
    let informationalUsed = 0;
    for (let attempt = 0; ; attempt++) {
      const overBudget = this.contextOverflow();
      if (overBudget) return this.end('truncated', overBudget);
      const completion = await this.ask(turn);
      if (!completion) return;
      const answer = parseCompletion(completion, this.tools, { idPrefix: `call_${turn.index}_${attempt}_` });
      this.messages.push(assistantMessage(answer));

      let error: InvalidAnswer | null = answer.error ? { kind: answer.error.kind, message: answer.error.message } : null;
      let unanswered: ToolCall[] = answer.calls;
      if (!error) {
        let action: ToolCall | null = null;
        let actions = 0;
        let asks = 0;
        for (const call of answer.calls) {
          if (this.informationalNames.has(call.name)) asks++;
          else if (actions++ === 0) action = call;
        }
        if (actions > 1) {
          error = { kind: 'multiple_actions', message: `make one action per answer, not ${actions}` };
        } else if (informationalUsed + asks > this.input.maxInformationalCalls) {
          const limit = this.input.maxInformationalCalls;
          error = { kind: 'too_many_informational_calls', message: `at most ${limit} informational calls per decision; make your move` };
        } else {
          for (const call of answer.calls) {
            if (call !== action) await this.inform(turn, call);
          }
          informationalUsed += asks;
          if (!action) continue;
          const refusal = this.refusal(action);
          if (refusal === null) return this.step(turn, action);
          error = { kind: 'illegal_action', message: refusal, action };
          unanswered = [action];
        }
      }

      // The answer is not a legal action (rule 8: counted; its raw text is in the turn's calls).
      this.counts.invalidActions++;
      turn.calls[turn.calls.length - 1].invalid = true;
      const retry = rule.mode === 'retry' && invalidAnswers < rule.maxRetries;
      const feedback = invalidAnswerText(error.message, retry);
      if (unanswered.length === 0) this.messages.push(observationMessage(feedback));
      for (const call of unanswered) this.messages.push(toolResultMessage(call, feedback));
      if (retry) {
        invalidAnswers++;
        this.counts.retries++;
        continue;
      }
      turn.invalid = true;
      turn.parseError = answer.error;
      if (error.action) turn.actions.push(error.action);
      turn.feedback = feedback;
      turn.done = true;
      turn.rewardParts = { [INVALID_ACTION_PART]: rule.penalty };
      this.envReturn += rule.penalty;
      scoreTurn(turn, this.input.rewards);
      return this.end('completed', `invalid action (${error.kind}): ${error.message}`);
    }
  }

  /** Answers to draw per decision: `decisionSamples` where the env scores every legal action, else 1. */
  private samplesPerDecision(): number {
    const k = this.input.decisionSamples ?? 1;
    return k > 1 && typeof this.env.actionRewards === 'function' ? k : 1;
  }

  /** One policy call, recorded on the turn; null when it timed out (the episode has ended). */
  private async ask(turn: Turn): Promise<Completion | null> {
    const { input } = this;
    const k = this.samplesPerDecision();
    const request: PolicyRequest = {
      messages: this.messages.slice(),
      tools: this.tools,
      maxTokens: input.maxTokens,
      temperature: input.temperature,
      topP: input.topP,
      topK: input.topK,
      stop: input.stop,
      seed: this.seeds.nextUint32(),
      view: this.env,
      ...(k > 1 ? { n: k } : {}),
    };
    const result = await callPolicy(input.policy, request, input.callTimeoutMs, input.signal);
    turn.timings.policyMs += result.latencyMs;
    this.counts.policyMs += result.latencyMs;
    this.counts.llmCalls++;
    const completion: Completion =
      result.kind === 'completion'
        ? result.completion
        : {
            text: '',
            promptTokenIds: null,
            completionTokenIds: null,
            logprobs: null,
            tokenIdsExact: false,
            finishReason: 'timeout',
            modelId: input.policy.name,
            policyVersion: 0,
          };
    turn.calls.push({ messages: request.messages, tools: this.tools, completion, latencyMs: result.latencyMs, sampling: callSampling(request) });
    if (result.kind === 'completion') this.countCompletion(completion);
    if (result.kind === 'completion' && k > 1 && completion.finishReason !== 'error') {
      turn.calls[turn.calls.length - 1].decision = await this.scoreDecision(turn, [completion, ...result.others]);
      for (const other of result.others) this.counts.alternativeTokens += other.completionTokenIds?.length ?? 0;
    }
    if (completion.finishReason === 'timeout') {
      this.counts.timeouts++;
      this.end('truncated', `policy call timed out after ${input.callTimeoutMs ?? Math.round(result.latencyMs)} ms`);
      return null;
    }
    if (completion.finishReason === 'error') {
      throw new EpisodeFailure(`policy '${input.policy.name}' reported an error${completion.text ? `: ${completion.text}` : ''}`);
    }
    if (completion.finishReason === 'length') this.counts.lengthFinishes++;
    return completion;
  }

  /**
   * The decision's answers scored exactly (envs/action-rewards.ts): each one's sole action call, if
   * legal, gets the env's expected reward for that action now; an answer that is not a legal action
   * gets the env's invalid-action penalty; one that only asks for information gets null.
   */
  private async scoreDecision(turn: Turn, completions: Completion[]): Promise<DecisionSamples> {
    const env = this.env;
    const values = await this.envCall('actionRewards', turn, () => env.actionRewards!());
    if (!Array.isArray(values)) throw new EpisodeFailure(`env.actionRewards must return a list, got ${typeof values}`);
    const actions = completions.map((completion): Action | null | 'asks' => {
      const answer = parseCompletion(completion, this.tools, { idPrefix: 'alt_' });
      if (answer.error) return null;
      const moves = answer.calls.filter((call) => !this.informationalNames.has(call.name));
      if (moves.length === 0 && answer.calls.length > 0) return 'asks';
      if (moves.length !== 1 || this.refusal(moves[0]) !== null) return null;
      return { name: moves[0].name, arguments: moves[0].arguments };
    });
    let scored: number[];
    try {
      scored = sampledActionRewards(values, actions.map((a) => (a === 'asks' ? null : a)), env.invalidAction.penalty);
    } catch (error) {
      throw new EpisodeFailure(`scoring the decision's samples: ${errorText(error)}`);
    }
    return {
      alternatives: completions.slice(1),
      rewards: scored.map((r, j) => (actions[j] === 'asks' ? null : r)),
      invalid: actions.map((a) => a === null),
      actionValues: values.map(({ action, expectedReward }) => ({ action: { name: action.name, arguments: action.arguments }, reward: expectedReward })),
    };
  }

  private countCompletion(completion: Completion): void {
    if (completion.promptTokenIds && completion.completionTokenIds) {
      this.counts.promptTokens += completion.promptTokenIds.length;
      this.counts.completionTokens += completion.completionTokenIds.length;
    } else {
      this.counts.tokensKnown = false;
    }
    const version = completion.policyVersion;
    if (typeof version === 'number' && !this.policyVersions.includes(version)) this.policyVersions.push(version);
  }

  /** Why the next call cannot fit the context (prompt + maxTokens over the limit), or null. */
  private contextOverflow(): string | null {
    const { policy, maxTokens } = this.input;
    if (this.contextLimit === Infinity || !policy.countTokens) return null;
    const promptTokens = policy.countTokens(this.messages, this.tools);
    if (promptTokens + maxTokens <= this.contextLimit) return null;
    return `context budget: the next prompt has ${promptTokens} tokens + ${maxTokens} max new tokens, over the limit of ${this.contextLimit}`;
  }

  private async inform(turn: Turn, call: ToolCall): Promise<void> {
    const env = this.env;
    const result = await this.envCall('inform', turn, () => env.inform!({ name: call.name, arguments: call.arguments }));
    if (typeof result !== 'string') throw new EpisodeFailure(`env.inform returned ${typeof result}, not a string`);
    turn.informational.push({ call, result });
    this.counts.informationalCalls++;
    this.messages.push(toolResultMessage(call, result));
  }

  /** env.validate's verdict: null when legal, else the reason. */
  private refusal(action: ToolCall): string | null {
    let verdict: unknown;
    try {
      verdict = this.env.validate({ name: action.name, arguments: action.arguments });
    } catch (error) {
      throw new EpisodeFailure(`env.validate threw: ${errorText(error)}`);
    }
    if (verdict === null) return null;
    if (typeof verdict === 'string') return verdict || 'the env refused this action';
    throw new EpisodeFailure(`env.validate must return null (legal) or a string (why not), got ${typeof verdict}`);
  }

  private async step(turn: Turn, action: ToolCall): Promise<void> {
    const env = this.env;
    const raw = await this.envCall('step', turn, () => env.step({ name: action.name, arguments: action.arguments }));
    const check = envStepSchema.safeParse(raw);
    if (!check.success) throw new EpisodeFailure(`env.step returned an invalid value: ${describeZodError(check.error)}`);
    const step = raw as EnvStep;
    const parts = envRewardParts(step.reward, step.rewardParts);
    if (typeof parts === 'string') throw new EpisodeFailure(`env.step returned an invalid value: ${parts}`);
    turn.actions.push(action);
    turn.feedback = step.observation;
    turn.done = step.done;
    turn.truncated = step.truncated && !step.done;
    turn.info = step.info ?? {};
    turn.rewardParts = parts;
    this.envReturn += step.reward;
    this.messages.push(toolResultMessage(action, step.observation));
    scoreTurn(turn, this.input.rewards);
    if (step.done) this.end('completed', null);
    else if (step.truncated) this.end('truncated', 'the env truncated the episode');
  }

  /** env.state() at a decision, checked: plain data (an object), as the critic estimator and the store need it. */
  private async recordedState(turn: Turn): Promise<Record<string, unknown>> {
    const state: unknown = await this.envCall('state', turn, () => this.env.state());
    if (state === null || typeof state !== 'object' || Array.isArray(state)) {
      throw new EpisodeFailure(`env.state() must return an object, got ${Array.isArray(state) ? 'an array' : state === null ? 'null' : typeof state}`);
    }
    return state as Record<string, unknown>;
  }

  /** Runs an env method (sync or async), timing it and naming it when it throws. */
  private async envCall<T>(what: string, turn: Turn | null, fn: () => T | Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      const result = fn();
      return isThenable(result) ? await result : result;
    } catch (error) {
      throw new EpisodeFailure(`env.${what} threw: ${errorText(error)}`);
    } finally {
      const ms = performance.now() - start;
      this.counts.envMs += ms;
      if (turn) turn.timings.envMs += ms;
    }
  }

  record(): Trajectory {
    const { input, counts, turns } = this;
    // A turn that ended before its first call (context budget) holds nothing.
    if (turns.length > 0 && turns[turns.length - 1].calls.length === 0) turns.pop();
    const last = turns.at(-1);
    const outcome =
      this.status === 'failed' ? null : episodeOutcome(last && !last.invalid ? last.info : undefined, this.envReturn);
    const metrics = episodeMetrics(counts, turns.length, outcome);
    let reward = 0;
    const rewardParts: Record<string, number> = {};
    for (const turn of turns) {
      reward += turn.reward;
      for (const key in turn.rewardParts) rewardParts[key] = (rewardParts[key] ?? 0) + turn.rewardParts[key];
    }
    return {
      id: input.id ?? newId('traj'),
      runId: input.runId ?? null,
      groupId: input.groupId ?? null,
      env: input.envName,
      seed: input.seed,
      sample: input.sample ?? 0,
      policy: input.policy.name,
      turns,
      messages: this.messages,
      additionalHistories: [],
      reward,
      rewardParts,
      metrics,
      status: this.status,
      statusReason: this.statusReason,
      policyVersions: this.policyVersions,
      quality: [],
      startedAt: this.startedAt,
      finishedAt: isoNow(),
    };
  }
}
