/**
 * Runs whose process died without recording an end. A run stopped by Ctrl-C or SIGTERM records
 * itself as failed (cli/interrupt.ts); one killed by SIGKILL or the out-of-memory killer cannot, and
 * would list as "running" for ever. Commands that show or resume runs first record such runs as
 * failed, saying why and, for a train run, its latest checkpoint.
 */
import { nowIso } from '../core/ids.ts';
import type { Run } from '../core/trajectory.ts';
import { describeOwner, ownerState } from './run-owner.ts';
import type { Store } from './store.ts';

/** The most running runs looked at (a store rarely holds more than a few at once). */
const MAX_RUNNING = 1000;

export function deadRunError(run: Run): string {
  const who = run.owner ? describeOwner(run.owner) : 'its process';
  return `${who} ended without recording the run's end (killed, e.g. by SIGKILL or the out-of-memory killer, or crashed)`;
}

/** Records as failed every running run whose process is gone; returns those it recorded. */
export async function recordDeadRuns(store: Store): Promise<Run[]> {
  const recorded: Run[] = [];
  for (const run of await store.listRuns({ status: 'running', limit: MAX_RUNNING })) {
    if (!run.owner || ownerState(run.owner) !== 'gone') continue;
    const summary: Record<string, unknown> = { error: deadRunError(run), owner: run.owner };
    // As an interrupted train run records it: null when only the warm start was saved.
    if (run.kind === 'train') summary.lastCheckpointStep = (await store.listCheckpoints(run.id)).at(-1)?.step || null;
    const end = { finishedAt: nowIso(), summary };
    if (await store.abandonRun(run.id, run.owner, end)) recorded.push({ ...run, status: 'failed', ...end });
  }
  return recorded;
}
