/** Records of play: turns, trajectories, groups and runs. Plain JSON-serialisable data. */
import type { Completion } from './completion.ts';
import type { Message, ToolCall, ToolSpec } from './messages.ts';

/** Named reward components; the total is their weighted sum, but every part is kept (rule 7). */
export type RewardParts = Record<string, number>;

/** One LLM call within a turn: exactly what was sent and what came back. */
export interface LlmCall {
  messages: Message[];
  tools: ToolSpec[];
  completion: Completion;
  latencyMs: number;
  /** The sampling settings the call asked for; absent in older records. */
  sampling?: CallSampling;
  /** Set when the env refused this call's answer (not a legal action), retried or not. */
  invalid?: boolean;
  /** The other answers drawn at this decision, each scored exactly (dense envs; EpisodeSettings.decisionSamples). */
  decision?: DecisionSamples;
}

/**
 * What a call asked its sampler for: what its completions' `logprobs` are relative to (an external
 * trainer that rescales logits needs the temperature). null: left to the backend's default (a
 * request through `spindle proxy` that did not say).
 */
export interface CallSampling {
  temperature: number | null;
  maxTokens: number | null;
  topP?: number;
  topK?: number;
  stop?: string[];
  seed?: number;
}

/**
 * Samples of one decision beside the played answer (DESIGN rule 5): drawn with it from the same
 * prompt and weights, never played, each scored by the env's exact expected reward of its action.
 */
export interface DecisionSamples {
  /** The other completions (the played one is the call's own `completion`). */
  alternatives: Completion[];
  /**
   * Per completion, the played one first: its action's exact expected reward now (env.actionRewards),
   * the env's invalid-action penalty for an answer that is not a legal action, null when the env
   * scored no such action.
   */
  rewards: (number | null)[];
  /** Per completion, the played one first: the answer is not a legal action. */
  invalid: boolean[];
  /**
   * Every action the env scored at this decision (env.actionRewards), with its exact expected reward:
   * what the answers were scored from, and what the dense estimator's explored answers
   * (train/explored-answers.ts) are drawn from. Absent in older records.
   */
  actionValues?: { action: { name: string; arguments: Record<string, unknown> }; reward: number }[];
}

export type ParseErrorKind = 'no_tool_call' | 'malformed_json' | 'unknown_tool' | 'bad_arguments' | 'empty';

export interface ParseError {
  kind: ParseErrorKind;
  message: string;
  /** The raw text that failed to parse. */
  raw: string;
}

/** An informational tool call answered by the env without ending the decision. */
export interface InformationalCall {
  call: ToolCall;
  result: string;
}

export interface Turn {
  index: number;
  /** The observation the agent acted on, as text. */
  observation: string;
  /** The env's state() as the agent acted (plain data: what the critic estimator keys on); absent in older records. */
  state?: Record<string, unknown>;
  /** Every LLM call made during this turn (retries after an invalid action and informational rounds included). */
  calls: LlmCall[];
  /** The action call(s) that stepped the env, when one parsed; with `invalid`, the call the env refused (if any). */
  actions: ToolCall[];
  informational: InformationalCall[];
  /** Set when the final answer of the turn could not be parsed into a legal action. */
  parseError: ParseError | null;
  invalid: boolean;
  /** What the env said back (the next observation or an error message). */
  feedback: string;
  reward: number;
  rewardParts: RewardParts;
  done: boolean;
  truncated: boolean;
  info: Record<string, unknown>;
  timings: { policyMs: number; envMs: number };
}

export type TrajectoryStatus = 'completed' | 'truncated' | 'failed';

export interface QualityIssue {
  kind: 'empty_response' | 'no_action' | 'too_few_turns' | 'missing_system_prompt';
  turn: number | null;
  message: string;
}

export interface Trajectory {
  id: string;
  runId: string | null;
  groupId: string | null;
  env: string;
  seed: number;
  /** Index of this sample within its group (0..G-1). */
  sample: number;
  policy: string;
  turns: Turn[];
  /** The final main conversation. */
  messages: Message[];
  /** Further conversations of the same episode (sub-agents, merged logged calls). */
  additionalHistories: Message[][];
  reward: number;
  rewardParts: RewardParts;
  metrics: Record<string, number>;
  status: TrajectoryStatus;
  /** Why it was truncated or failed (max turns, context budget, an error message). */
  statusReason: string | null;
  policyVersions: number[];
  quality: QualityIssue[];
  startedAt: string;
  finishedAt: string;
}

/** The trajectories of one task (env + seed), sampled G times from the same start. */
export interface Group {
  id: string;
  runId: string | null;
  env: string;
  seed: number;
  trajectoryIds: string[];
}

export type RunKind = 'play' | 'eval' | 'train' | 'proxy';
export type RunStatus = 'running' | 'finished' | 'failed';

export interface Run {
  id: string;
  kind: RunKind;
  env: string;
  envOptions: Record<string, unknown>;
  policy: string;
  config: Record<string, unknown>;
  status: RunStatus;
  createdAt: string;
  finishedAt: string | null;
  /** Headline results, written when the run ends. */
  summary: Record<string, unknown> | null;
  /**
   * The process that created or last reopened the run, recorded by the store (ignored on createRun);
   * null where none was recorded (runs stored before it was). See store/run-owner.ts.
   */
  owner?: RunOwner | null;
}

/** A process: host, pid, and where Linux has them the boot id and its start time (a pid is reused, these are not). */
export interface RunOwner {
  host: string;
  pid: number;
  bootId: string | null;
  /** Start time in clock ticks since boot (/proc/PID/stat field 22). */
  startTicks: number | null;
}

export interface CheckpointRecord {
  runId: string;
  step: number;
  /** Folder holding the weights, relative to the run folder. */
  path: string;
  policyVersion: number;
  createdAt: string;
  metrics: Record<string, number>;
}

export interface MetricPoint {
  runId: string;
  step: number;
  name: string;
  value: number;
}
