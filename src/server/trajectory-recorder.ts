/**
 * The recording half of the proxy: every proxied LLM call becomes a turn of the trajectory the agent
 * named; `reward` finishes and scores it. Calls are merged into conversations (main and additional
 * histories, trajectory-recorder-merge.ts). Store writes run after the response has gone out and
 * are batched: every trajectory changed within `flushDelayMs` is saved in one transaction, so the
 * store's synchronous commit (better-sqlite3 blocks the event loop) is paid once per batch, not
 * once per call.
 *
 * Until it is scored a trajectory is stored with status 'failed' and reason 'awaiting reward', so
 * a trainer reading the store never takes unscored work for finished episodes.
 */
import type { Completion } from '../core/completion.ts';
import { nowIso } from '../core/ids.ts';
import type { Message, ToolSpec } from '../core/messages.ts';
import type { CallSampling, Group, LlmCall, RewardParts, Trajectory, Turn } from '../core/trajectory.ts';
import { applyGroupScore, unscoredMarks, type GroupRewardPart, type GroupScore } from '../rewards/group-reward.ts';
import type { Store } from '../store/store.ts';
import { failedCompletion, type RecordedChoice } from './proxy-completion.ts';
import { ProxyRequestError } from './proxy-errors.ts';
import type { CallNaming } from './proxy-naming.ts';
import { mergeCall } from './trajectory-recorder-merge.ts';

export const AWAITING_REWARD = 'awaiting reward';

export interface UpstreamFailure {
  /** The upstream's HTTP status, or null when it could not be reached or the stream broke. */
  status: number | null;
  message: string;
}

export interface RecordedCall {
  naming: CallNaming;
  model: string;
  messages: Message[];
  tools: ToolSpec[];
  sampling: CallSampling;
  latencyMs: number;
  streamed: boolean;
  /** One per choice; empty when the call failed. */
  choices: RecordedChoice[];
  failure: UpstreamFailure | null;
}

interface State {
  trajectory: Trajectory;
  taskId: string | null;
  upstreamErrors: number;
  lastError: string | null;
}

export interface RecorderOptions {
  store: Store;
  runId: string;
  /** Where a failed store write is reported (it cannot fail the response, which has gone out). */
  onError?: (error: Error) => void;
  /** How long changes wait to be written together (default 50 ms); a reward is written at once. */
  flushDelayMs?: number;
}

export class TrajectoryRecorder {
  private readonly states = new Map<string, Promise<State>>();
  private readonly groups = new Map<string, Group>();
  private readonly store: Store;
  private readonly runId: string;
  private readonly onError: (error: Error) => void;
  private scored = 0;
  /** Tasks whose group is being scored now (a second request waits for none: it is refused). */
  private readonly scoring = new Set<string>();
  private readonly flushDelayMs: number;
  private readonly dirty = new Set<State>();
  private flushTimer: NodeJS.Timeout | null = null;
  private writes: Promise<void> = Promise.resolve();
  /** Calls being added (a first call of an id reads the store first). */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(options: RecorderOptions) {
    this.store = options.store;
    this.runId = options.runId;
    this.onError = options.onError ?? ((e) => process.stderr.write(`spindle proxy: ${e.message}\n`));
    this.flushDelayMs = options.flushDelayMs ?? 50;
  }

  /** Adds a call as the trajectory's next turn and queues its write. */
  record(call: RecordedCall): Promise<void> {
    const recording = this.recordCall(call);
    this.inFlight.add(recording);
    const forget = () => this.inFlight.delete(recording);
    recording.then(forget, forget);
    return recording;
  }

  private async recordCall(call: RecordedCall): Promise<void> {
    const state = await this.state(call.naming.trajectoryId, call);
    if (call.naming.taskId !== null && state.taskId !== call.naming.taskId) {
      throw new ProxyRequestError(409, `trajectory '${state.trajectory.id}' belongs to task '${state.taskId}', not '${call.naming.taskId}'`);
    }
    const t = state.trajectory;
    const first = call.choices[0];
    const conversation = first ? mergeCall(t, call.messages, first.message) : null;
    const completions: Completion[] = first ? call.choices.map((c) => c.completion) : [failedCompletion(call.model)];
    const llmCalls: LlmCall[] = completions.map((completion) => ({
      messages: call.messages,
      tools: call.tools,
      completion,
      latencyMs: call.latencyMs,
      sampling: call.sampling,
    }));
    const info: Record<string, unknown> = { conversation, streamed: call.streamed, model: call.model };
    if (call.failure) {
      info.upstreamError = call.failure;
      state.upstreamErrors++;
      state.lastError = `upstream error${call.failure.status === null ? '' : ` ${call.failure.status}`}: ${call.failure.message}`;
    }
    t.turns.push(newTurn(t.turns.length, call.messages, first?.message ?? null, llmCalls, info, call.latencyMs));
    for (const c of completions) if (!t.policyVersions.includes(c.policyVersion) && c.finishReason !== 'error') t.policyVersions.push(c.policyVersion);
    t.metrics = { ...unscoredMarks(t.metrics), ...metricsOf(t, state.upstreamErrors) };
    if (t.status !== 'completed') t.statusReason = state.lastError ? `${AWAITING_REWARD}; ${state.lastError}` : AWAITING_REWARD;
    this.queueWrite(state);
  }

  /** Finishes and scores a trajectory; resolves once it is stored. Scoring again replaces the score. */
  async reward(trajectoryId: string, reward: number, parts: RewardParts | undefined): Promise<Trajectory> {
    const state = await this.state(trajectoryId, null);
    const t = state.trajectory;
    if (t.turns.length === 0) throw new ProxyRequestError(404, `no calls were recorded for trajectory '${trajectoryId}'`);
    t.reward = reward;
    t.rewardParts = parts ?? { reward };
    t.status = 'completed';
    t.statusReason = state.lastError;
    t.finishedAt = nowIso();
    const last = t.turns.at(-1) as Turn;
    for (const turn of t.turns) Object.assign(turn, { reward: 0, rewardParts: {}, done: false });
    Object.assign(last, { reward, rewardParts: t.rewardParts, done: true });
    this.scored++;
    this.queueWrite(state);
    await this.flush();
    // Scored: later calls under this id reload it from the store.
    this.states.delete(trajectoryId);
    return t;
  }

  /**
   * Scores the group of task `taskId` with a group reward part (the LLM judge): each trajectory of the
   * group gets part `part.name` (added to its reward; one not rewarded yet is finished by it). A group
   * the part cannot score is marked `${name}_unscored` and nothing else changes. Resolves once stored.
   * A reward posted afterwards replaces the parts (POST /reward first, then judge).
   */
  async scoreGroup(taskId: string, part: GroupRewardPart): Promise<{ groupId: string; score: GroupScore; trajectories: Trajectory[] }> {
    if (this.scoring.has(taskId)) throw new ProxyRequestError(409, `task '${taskId}' is being scored already`);
    this.scoring.add(taskId);
    try {
      return await this.scoreGroupOnce(taskId, part);
    } finally {
      this.scoring.delete(taskId);
    }
  }

  private async scoreGroupOnce(taskId: string, part: GroupRewardPart): Promise<{ groupId: string; score: GroupScore; trajectories: Trajectory[] }> {
    await Promise.allSettled(this.inFlight);
    const groupId = `${this.runId}:${taskId}`;
    const group = this.groups.get(groupId) ?? (await this.store.getGroup(groupId));
    if (!group || group.trajectoryIds.length === 0) throw new ProxyRequestError(404, `no trajectories were recorded for task '${taskId}'`);
    const states = (await Promise.all(group.trajectoryIds.map((id) => this.state(id, null)))).filter((s) => s.trajectory.turns.length > 0);
    if (states.length === 0) throw new ProxyRequestError(404, `no calls were recorded for task '${taskId}'`);
    const trajectories = states.map((s) => s.trajectory);
    if (trajectories.some((t) => part.name in t.rewardParts)) throw new ProxyRequestError(409, `task '${taskId}' already has reward part '${part.name}'`);
    let score: GroupScore;
    try {
      score = await part.scoreGroup(trajectories);
    } catch (error) {
      score = { status: 'unscored', reason: (error as Error).message };
    }
    if (score.status === 'scored') {
      for (const s of states) {
        const t = s.trajectory;
        if (t.status === 'completed') continue;
        t.status = 'completed';
        t.statusReason = s.lastError;
        t.finishedAt = nowIso();
        (t.turns.at(-1) as Turn).done = true;
        this.scored++;
      }
    }
    applyGroupScore(trajectories, score, part.name, part.weight);
    for (const s of states) this.queueWrite(s);
    await this.flush();
    // Finished: later calls under these ids reload them from the store.
    for (const t of trajectories) if (t.status === 'completed') this.states.delete(t.id);
    return { groupId, score, trajectories };
  }

  /** Writes every pending change now; resolves once they (and earlier batches) are stored. */
  async flush(): Promise<void> {
    await Promise.allSettled(this.inFlight);
    this.writeBatch();
    await this.writes;
  }

  summary(): Record<string, unknown> {
    return { trajectoriesOpen: this.states.size, scored: this.scored, groups: this.groups.size };
  }

  private state(trajectoryId: string, call: RecordedCall | null): Promise<State> {
    let state = this.states.get(trajectoryId);
    if (!state) {
      state = this.load(trajectoryId, call);
      this.states.set(trajectoryId, state);
      state.catch(() => this.states.delete(trajectoryId));
    }
    return state;
  }

  private async load(trajectoryId: string, call: RecordedCall | null): Promise<State> {
    const stored = await this.store.getTrajectory(trajectoryId);
    if (stored && stored.runId !== this.runId) {
      throw new ProxyRequestError(409, `trajectory '${trajectoryId}' belongs to run '${stored.runId}'; use another id`);
    }
    if (!stored && !call) throw new ProxyRequestError(404, `no calls were recorded for trajectory '${trajectoryId}'`);
    const taskId = stored ? taskOf(stored) : (call?.naming.taskId ?? null);
    const trajectory = stored ?? this.newTrajectory(trajectoryId, taskId, call?.model ?? '');
    return { trajectory, taskId, upstreamErrors: trajectory.metrics.upstreamErrors ?? 0, lastError: null };
  }

  private newTrajectory(id: string, taskId: string | null, model: string): Trajectory {
    let groupId: string | null = null;
    let sample = 0;
    if (taskId !== null) {
      groupId = `${this.runId}:${taskId}`;
      let group = this.groups.get(groupId);
      if (!group) {
        group = { id: groupId, runId: this.runId, env: 'proxy', seed: 0, trajectoryIds: [] };
        this.groups.set(groupId, group);
      }
      sample = group.trajectoryIds.length;
      group.trajectoryIds.push(id);
    }
    const now = nowIso();
    return {
      id,
      runId: this.runId,
      groupId,
      env: 'proxy',
      seed: 0,
      sample,
      policy: model,
      turns: [],
      messages: [],
      additionalHistories: [],
      reward: 0,
      rewardParts: {},
      metrics: {},
      status: 'failed',
      statusReason: AWAITING_REWARD,
      policyVersions: [],
      quality: [],
      startedAt: now,
      finishedAt: now,
    };
  }

  private queueWrite(state: State): void {
    this.dirty.add(state);
    this.flushTimer ??= setTimeout(() => this.writeBatch(), this.flushDelayMs);
  }

  private report(error: unknown, trajectoryId: string | null): void {
    const message = error instanceof Error ? error.message : String(error);
    this.onError(new Error(trajectoryId === null ? `store write failed: ${message}` : `trajectory '${trajectoryId}' could not be stored: ${message}`));
  }

  /** Chains one transaction per kind for everything changed since the last batch. */
  private writeBatch(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.dirty.size === 0) return;
    const trajectories = [...this.dirty].map((s) => s.trajectory);
    this.dirty.clear();
    const groups = [...new Set(trajectories.map((t) => t.groupId))].flatMap((id) => (id === null ? [] : (this.groups.get(id) ?? [])));
    this.writes = this.writes
      .then(async () => {
        if (groups.length > 0) await this.store.saveGroups(groups);
        await this.store.saveTrajectories(trajectories);
      })
      // One transaction is all or none: on failure, save one by one so one bad record loses only itself.
      .catch(async () => {
        for (const t of trajectories) await this.store.saveTrajectories([t]).catch((e: unknown) => this.report(e, t.id));
      })
      .catch((error: unknown) => this.report(error, null));
  }
}

function taskOf(t: Trajectory): string | null {
  if (t.groupId === null || t.runId === null) return null;
  return t.groupId.startsWith(`${t.runId}:`) ? t.groupId.slice(t.runId.length + 1) : t.groupId;
}

/** The observation a call acted on: the last user or tool message it sent. */
function observationOf(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user' || messages[i].role === 'tool') return messages[i].content;
  }
  return '';
}

function newTurn(index: number, messages: Message[], answer: Message | null, calls: LlmCall[], info: Record<string, unknown>, latencyMs: number): Turn {
  return {
    index,
    observation: observationOf(messages),
    calls,
    actions: answer?.toolCalls ?? [],
    informational: [],
    parseError: null,
    invalid: answer === null,
    feedback: '',
    reward: 0,
    rewardParts: {},
    done: false,
    truncated: false,
    info,
    timings: { policyMs: latencyMs, envMs: 0 },
  };
}

function metricsOf(t: Trajectory, upstreamErrors: number): Record<string, number> {
  let completionTokens = 0;
  let exactCalls = 0;
  for (const turn of t.turns) {
    for (const { completion } of turn.calls) {
      completionTokens += completion.completionTokenIds?.length ?? 0;
      if (completion.tokenIdsExact) exactCalls++;
    }
  }
  return { calls: t.turns.length, upstreamErrors, completionTokens, exactCalls, additionalHistories: t.additionalHistories.length };
}
