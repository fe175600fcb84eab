/**
 * Many episodes at once: G samples per seed (a Group), a concurrency limit, progress events, and a
 * summary. Every episode gets its own env instance; a failing episode is recorded with its reason
 * and never stops the others. Results are ordered by (seed, sample), so they do not depend on the
 * concurrency or on which episode finished first. With group reward parts (an LLM judge), a group's
 * episodes are reported (events, onTrajectory) once the whole group has ended and been scored.
 */
import { UsageError } from '../core/errors.ts';
import { yieldToEventLoop } from '../core/event-loop.ts';
import { newId } from '../core/ids.ts';
import type { Group, Trajectory } from '../core/trajectory.ts';
import { runEpisode } from '../agent/episode.ts';
import { resolveEpisodeSettings, type episodeSettingsSchema } from '../agent/episode-settings.ts';
import type { EnvSpec } from '../envs/env.ts';
import type { Policy } from '../policy/policy.ts';
import { applyGroupRewardParts, applyGroupScore } from '../rewards/group-reward.ts';
import type { RewardConfig } from '../rewards/reward.ts';
import type { z } from 'zod';
import { checkTrajectoryQuality } from './quality.ts';
import { RolloutTally, type RolloutSummary } from './summary.ts';

export interface RolloutProgress {
  total: number;
  started: number;
  /** Episodes that ended, failed ones included. */
  finished: number;
  failed: number;
  turns: number;
  elapsedMs: number;
  episodesPerSec: number;
  turnsPerSec: number;
}

export type RolloutEvent =
  | { type: 'episode_started'; seed: number; sample: number; progress: RolloutProgress }
  /** `seedIndex`: the seed's position in the request's seeds. */
  | { type: 'episode_finished'; trajectory: Trajectory; seedIndex: number; progress: RolloutProgress };

export interface RolloutRequest<O extends Record<string, unknown> = Record<string, unknown>> {
  spec: EnvSpec<O>;
  /** Validated env options (resolveEnvOptions). */
  options: O;
  policy: Policy;
  /** The tasks; or `count` seeds from `baseSeed` (baseSeed, baseSeed + 1, ...). */
  seeds?: readonly number[];
  count?: number;
  baseSeed?: number;
  /** Samples per seed (G), forming one Group per seed (default 1). */
  groupSize?: number;
  /** Episodes in flight at once (default 8; at most what fills the policy's rowsAtOnce). */
  concurrency?: number;
  /** Episode settings (max turns, sampling, timeouts); defaults filled and checked. */
  episode?: z.input<typeof episodeSettingsSchema>;
  /** Reward functions and weights; default: the env's own (spec.rewards). */
  rewards?: RewardConfig;
  runId?: string | null;
  /** Quality threshold: episodes with fewer turns are flagged (default 1). */
  minTurns?: number;
  signal?: AbortSignal;
  onEvent?: (event: RolloutEvent) => void;
  /** Called as each episode ends (e.g. to store it); awaited, and an error from it stops the run. */
  onTrajectory?: (trajectory: Trajectory) => void | Promise<void>;
  /**
   * Called once a group's episodes have all been handed on (after an abort, with the ids of those
   * that were); awaited, and an error from it stops the run.
   */
  onGroup?: (group: Group) => void | Promise<void>;
  /**
   * Return the trajectories and groups (default true). A long run that stores them through
   * onTrajectory and onGroup can say false to keep memory flat: nothing is then held per episode,
   * and the summary is summed in finishing order.
   */
  keepTrajectories?: boolean;
}

export interface RolloutResult {
  /** Ordered by seed, then sample; empty with keepTrajectories false. */
  trajectories: Trajectory[];
  /** Ordered by seed; empty with keepTrajectories false. */
  groups: Group[];
  summary: RolloutSummary;
}

/** How often a run of synchronous episodes hands the event loop back (timers, signals, I/O). */
const YIELD_EVERY_MS = 25;

function positiveInt(value: number | undefined, fallback: number, field: string): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < 1) throw new UsageError(`${field} must be a positive integer, got ${value}`);
  return v;
}

export function rolloutSeeds(request: Pick<RolloutRequest, 'seeds' | 'count' | 'baseSeed'>): number[] {
  if (request.seeds) {
    for (const seed of request.seeds) {
      if (!Number.isSafeInteger(seed) || seed < 0) throw new UsageError(`seeds must be non-negative integers, got ${seed}`);
    }
    return [...request.seeds];
  }
  const count = request.count ?? 0;
  if (!Number.isSafeInteger(count) || count < 1) throw new UsageError(`episode count must be a positive integer, got ${request.count}`);
  const base = request.baseSeed ?? 0;
  if (!Number.isSafeInteger(base) || base < 0 || !Number.isSafeInteger(base + count)) {
    throw new UsageError(`base seed must be a non-negative integer, got ${request.baseSeed}`);
  }
  return Array.from({ length: count }, (_, i) => base + i);
}

/**
 * The requested concurrency, cut to the episodes that fill the samples the policy decodes at once
 * (an episode asks for up to decisionSamples of them per call); never below 1.
 */
export function episodesInFlight(policy: Policy, concurrency: number, decisionSamples: number): number {
  if (policy.rowsAtOnce === undefined) return concurrency;
  return Math.max(1, Math.min(concurrency, Math.floor(policy.rowsAtOnce / decisionSamples)));
}

export async function runRollouts<O extends Record<string, unknown>>(request: RolloutRequest<O>): Promise<RolloutResult> {
  const { spec, options, policy } = request;
  const seeds = rolloutSeeds(request);
  const groupSize = positiveInt(request.groupSize, 1, 'group size');
  const concurrency = positiveInt(request.concurrency, 8, 'concurrency');
  const settings = resolveEpisodeSettings(request.episode);
  const rewards = request.rewards ?? spec.rewards?.(options);
  const instructions = spec.instructions(options);
  const runId = request.runId ?? null;
  const keep = request.keepTrajectories ?? true;
  const tally = new RolloutTally();

  const total = seeds.length * groupSize;
  const trajectories: Trajectory[] = keep ? new Array<Trajectory>(total) : [];
  const keptGroups: Group[] = keep ? new Array<Group>(seeds.length) : [];
  // Groups are made as their first episode starts and let go once all of theirs have been handed
  // on, so a run holds only the groups in flight (jobs start in seed order).
  const open = new Map<number, { group: Group; delivered: Uint8Array; count: number }>();
  const openGroup = (index: number) => {
    let entry = open.get(index);
    if (!entry) {
      const group: Group = { id: newId('grp'), runId, env: spec.name, seed: seeds[index], trajectoryIds: Array.from({ length: groupSize }, () => newId('traj')) };
      entry = { group, delivered: new Uint8Array(groupSize), count: 0 };
      open.set(index, entry);
    }
    return entry;
  };
  const start = performance.now();
  const progress = { total, started: 0, finished: 0, failed: 0, turns: 0 };
  const snapshot = (): RolloutProgress => {
    const elapsedMs = performance.now() - start;
    const seconds = elapsedMs / 1000;
    return {
      ...progress,
      elapsedMs,
      episodesPerSec: seconds > 0 ? progress.finished / seconds : 0,
      turnsPerSec: seconds > 0 ? progress.turns / seconds : 0,
    };
  };

  const groupParts = rewards?.groupParts ?? [];
  // Per group, its ended episodes waiting for the rest of the group (only with group reward parts).
  const pending = groupParts.length > 0 ? new Map<number, { job: number; trajectory: Trajectory }[]>() : null;
  let cursor = 0;
  let stopError: unknown = null;
  let lastYield = start;
  /** Hands on group `index` once its episodes have all been handed on. */
  const closeGroup = async (index: number, group: Group): Promise<void> => {
    open.delete(index);
    if (keep) keptGroups[index] = group;
    try {
      await request.onGroup?.(group);
    } catch (error) {
      stopError ??= error;
    }
  };
  /** Counts an ended (and, with group parts, scored) episode, reports it and hands it on. */
  const deliver = async (job: number, trajectory: Trajectory): Promise<void> => {
    const seedIndex = Math.floor(job / groupSize);
    if (keep) trajectories[job] = trajectory;
    else tally.add(trajectory);
    progress.finished++;
    progress.turns += trajectory.turns.length;
    if (trajectory.status === 'failed') progress.failed++;
    request.onEvent?.({ type: 'episode_finished', trajectory, seedIndex, progress: snapshot() });
    try {
      await request.onTrajectory?.(trajectory);
    } catch (error) {
      stopError ??= error;
    }
    const entry = open.get(seedIndex)!;
    entry.delivered[job % groupSize] = 1;
    if (++entry.count === groupSize) await closeGroup(seedIndex, entry.group);
  };
  const worker = async (): Promise<void> => {
    while (cursor < total && stopError === null && !request.signal?.aborted) {
      const job = cursor++;
      const group = openGroup(Math.floor(job / groupSize)).group;
      const sample = job % groupSize;
      progress.started++;
      request.onEvent?.({ type: 'episode_started', seed: group.seed, sample, progress: snapshot() });
      // Listed field by field: a spread of the settings object would give every episode a slow, dictionary-mode input.
      const trajectory = await runEpisode({
        maxTurns: settings.maxTurns,
        maxTokens: settings.maxTokens,
        temperature: settings.temperature,
        topP: settings.topP,
        topK: settings.topK,
        stop: settings.stop,
        callTimeoutMs: settings.callTimeoutMs,
        maxInformationalCalls: settings.maxInformationalCalls,
        contextBudget: settings.contextBudget,
        decisionSamples: settings.decisionSamples,
        rewards,
        signal: request.signal,
        env: () => spec.create(options),
        envName: spec.name,
        instructions,
        policy,
        seed: group.seed,
        sample,
        id: group.trajectoryIds[sample],
        runId,
        groupId: group.id,
      });
      trajectory.quality = checkTrajectoryQuality(trajectory, { minTurns: request.minTurns });
      if (!pending) await deliver(job, trajectory);
      else {
        const index = Math.floor(job / groupSize);
        const members = pending.get(index) ?? [];
        pending.set(index, members);
        members.push({ job, trajectory });
        if (members.length === groupSize) {
          members.sort((x, y) => x.job - y.job); // sample order, whatever order they ended in
          try {
            await applyGroupRewardParts(groupParts, members.map((m) => m.trajectory));
          } catch (error) {
            stopError ??= error;
          }
          pending.delete(index);
          for (const m of members) await deliver(m.job, m.trajectory);
        }
      }
      if (performance.now() - lastYield > YIELD_EVERY_MS) {
        lastYield = performance.now();
        await yieldToEventLoop();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(episodesInFlight(policy, concurrency, settings.decisionSamples), total) }, worker));
  // Groups cut short (an abort): delivered as they are, marked unscored by every group part.
  for (const members of pending?.values() ?? []) {
    if (stopError !== null) break;
    for (const part of groupParts) applyGroupScore(members.map((m) => m.trajectory), { status: 'unscored', reason: 'the group did not finish' }, part.name, part.weight);
    for (const m of members) await deliver(m.job, m.trajectory);
  }
  // Groups an abort cut short keep the ids of the episodes that ran.
  for (const [index, { group, delivered, count }] of [...open].sort(([a], [b]) => a - b)) {
    if (stopError !== null) break;
    if (count > 0) await closeGroup(index, { ...group, trajectoryIds: group.trajectoryIds.filter((_, sample) => delivered[sample] === 1) });
  }
  if (stopError !== null) throw stopError;
  const elapsedMs = performance.now() - start;
  // Kept trajectories are summed in (seed, sample) order, so the summary is deterministic too.
  const ran = keep ? trajectories.filter((t) => t !== undefined) : [];
  for (const t of ran) tally.add(t);
  return { trajectories: ran, groups: keptGroups.filter((g) => g !== undefined), summary: tally.summary(total, elapsedMs) };
}
