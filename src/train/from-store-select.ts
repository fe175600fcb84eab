/**
 * Which stored trajectories offline training (`spindle train --from-store`) and the sample export
 * read: the scored ones of a run, optionally only some tasks, whose every successful LLM call holds
 * the exact ids and sampling logprobs the sampler produced. Anything else is skipped whole and
 * counted by reason: a trajectory that cannot be trained on is left out of its group's baseline too,
 * so the advantages compare only trajectories that are trained on.
 */
import { UsageError } from '../core/errors.ts';
import type { Trajectory } from '../core/trajectory.ts';
import { AWAITING_REWARD } from '../server/trajectory-recorder.ts';
import type { Store } from '../store/store.ts';

/** Why a stored trajectory was not selected. */
export const SKIP_REASONS = [
  /** Recorded by the proxy but never scored (POST /trajectories/{id}/reward was not called). */
  'awaiting_reward',
  /** The episode failed (an env or backend error): no reward to learn from. */
  'failed',
  /** No LLM call that returned an answer. */
  'no_calls',
  /** A call without prompt or completion ids (a server that does not report them, a scripted policy). */
  'missing_ids',
  /** A call whose ids are a re-tokenisation of the text, not what the sampler produced. */
  'inexact_ids',
  /** A call without one sampling logprob per completion token (the importance correction needs them). */
  'missing_logprobs',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface StoreSelection {
  /** The run whose trajectories are read (a proxy, play or eval run). */
  runId: string;
  /** Only these tasks (the proxy's task ids, or whole group ids); all when absent or empty. */
  taskIds?: readonly string[];
}

export interface SelectedTrajectories {
  /** Trainable trajectories, in the order they were stored. */
  trajectories: Trajectory[];
  /** Trajectories of the selected tasks that were read (selected + skipped). */
  read: number;
  skipped: Record<SkipReason, number>;
  /** Up to 20 skipped ids per reason, for messages. */
  skippedIds: Record<SkipReason, string[]>;
  /** Requested task ids that matched no stored trajectory. */
  unknownTasks: string[];
}

const PAGE = 500;
const IDS_KEPT = 20;

/** The task a trajectory belongs to: the proxy names its group `${runId}:${taskId}`. */
export function taskIdOf(t: Trajectory): string | null {
  if (t.groupId === null) return null;
  return t.runId !== null && t.groupId.startsWith(`${t.runId}:`) ? t.groupId.slice(t.runId.length + 1) : t.groupId;
}

/** The first reason `t` cannot be trained on, or null when it can. */
export function skipReason(t: Trajectory): SkipReason | null {
  if (t.status === 'failed') return t.statusReason?.startsWith(AWAITING_REWARD) ? 'awaiting_reward' : 'failed';
  const answered = t.turns.flatMap((turn) => turn.calls.map((c) => c.completion)).filter((c) => c.finishReason !== 'error' && c.finishReason !== 'timeout');
  if (answered.length === 0) return 'no_calls';
  if (answered.some((c) => c.promptTokenIds === null || c.completionTokenIds === null)) return 'missing_ids';
  if (answered.some((c) => !c.tokenIdsExact)) return 'inexact_ids';
  if (answered.some((c) => c.logprobs === null || c.logprobs.length !== c.completionTokenIds?.length)) return 'missing_logprobs';
  return null;
}

/** Reads the run's trajectories page by page and keeps the trainable ones of the selected tasks. */
export async function selectStoredTrajectories(store: Store, selection: StoreSelection): Promise<SelectedTrajectories> {
  const run = await store.getRun(selection.runId);
  if (!run) throw new UsageError(`--from-store ${selection.runId}: no such run in the store (see spindle runs)`);
  const tasks = selection.taskIds && selection.taskIds.length > 0 ? new Set(selection.taskIds) : null;
  const seenTasks = new Set<string>();
  const skipped = Object.fromEntries(SKIP_REASONS.map((r) => [r, 0])) as Record<SkipReason, number>;
  const skippedIds = Object.fromEntries(SKIP_REASONS.map((r) => [r, [] as string[]])) as Record<SkipReason, string[]>;
  const trajectories: Trajectory[] = [];
  let read = 0;
  let cursor: string | undefined;
  do {
    const page = await store.listTrajectories(run.id, { limit: PAGE, ...(cursor === undefined ? {} : { cursor }) });
    for (const t of page.items) {
      if (tasks) {
        const task = taskIdOf(t);
        const match = [task, t.groupId].find((name) => name !== null && tasks.has(name));
        if (match === undefined || match === null) continue;
        seenTasks.add(match);
      }
      read++;
      const reason = skipReason(t);
      if (reason === null) {
        trajectories.push(t);
      } else {
        skipped[reason]++;
        if (skippedIds[reason].length < IDS_KEPT) skippedIds[reason].push(t.id);
      }
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  const unknownTasks = tasks ? [...tasks].filter((task) => !seenTasks.has(task)) : [];
  return { trajectories, read, skipped, skippedIds, unknownTasks };
}
