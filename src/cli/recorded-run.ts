/**
 * The store record of a `play` or `eval` command: the run is created as running, its trajectories
 * go through a TrajectorySink, a signal marks it failed (interrupt.ts), and the command ends it as
 * finished with its report (after flushing the sink, whose count the report gives) or as failed
 * with its error.
 */
import { newId, nowIso } from '../core/ids.ts';
import type { Run } from '../core/trajectory.ts';
import type { Store } from '../store/store.ts';
import { markRunFailedOnInterrupt } from './interrupt.ts';
import { TrajectorySink, type SavePolicy } from './trajectory-sink.ts';

export type RecordedRunFields = Pick<Run, 'kind' | 'env' | 'envOptions' | 'policy' | 'config'>;

export class RecordedRun {
  private readonly stopHandlingInterrupts: () => void;

  private constructor(
    private readonly store: Store,
    readonly id: string,
    readonly sink: TrajectorySink,
  ) {
    this.stopHandlingInterrupts = markRunFailedOnInterrupt({ store, runId: id, sink });
  }

  /** Creates the run as running and starts recording its trajectories by `save`. */
  static async start(store: Store, fields: RecordedRunFields, save: SavePolicy): Promise<RecordedRun> {
    const run: Run = { id: newId('run'), ...fields, status: 'running', createdAt: nowIso(), finishedAt: null, summary: null };
    await store.createRun(run);
    return new RecordedRun(store, run.id, new TrajectorySink(store, save));
  }

  /** Records the run finished with `summary` (the sink flushed before, so the summary can count what it saved). */
  async finish(summary: Record<string, unknown>): Promise<void> {
    await this.store.finishRun(this.id, { status: 'finished', finishedAt: nowIso(), summary });
  }

  /** Saves what trajectories it can and records the run failed with `err`'s message. */
  async fail(err: unknown): Promise<void> {
    await this.sink.flush().catch(() => undefined);
    await this.store.finishRun(this.id, { status: 'failed', finishedAt: nowIso(), summary: { error: (err as Error).message } });
  }

  /** Stops marking the run on a signal (the command has ended it or is about to exit). */
  close(): void {
    this.stopHandlingInterrupts();
  }
}
