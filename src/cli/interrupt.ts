/**
 * Ctrl-C (SIGINT) or a kill (SIGTERM) in the middle of a command that writes a run: the run is
 * marked failed, with the signal as its error, before the process exits, so `spindle runs` never
 * shows a stopped run as still running. Store writes are synchronous (better-sqlite3) and checkpoints
 * are renamed into place, so a signal handled between two tasks finds nothing half written.
 */
import { nowIso } from '../core/ids.ts';
import type { Store } from '../store/store.ts';
import type { TrajectorySink } from './trajectory-sink.ts';

const EXIT_CODES: Record<'SIGINT' | 'SIGTERM', number> = { SIGINT: 130, SIGTERM: 143 };

export interface InterruptRecord {
  store: Store;
  runId: string;
  /** The command's buffered trajectories: saved before the run is marked, and counted in its summary. */
  sink?: TrajectorySink;
  /** More of the failed run's summary, and a line for the user (e.g. how to resume), from the signal's moment. */
  describe?: () => Promise<{ summary?: Record<string, unknown>; hint?: string }>;
}

/**
 * Until the returned function is called, SIGINT and SIGTERM mark `runId` failed ("interrupted by
 * SIGINT") and exit with 128 + the signal's number. A second signal while that is written exits at once.
 */
export function markRunFailedOnInterrupt(record: InterruptRecord): () => void {
  let handling = false;
  const handle = (signal: 'SIGINT' | 'SIGTERM'): void => {
    if (handling) process.exit(EXIT_CODES[signal]);
    handling = true;
    void (async () => {
      const error = `interrupted by ${signal}`;
      try {
        await record.sink?.flush();
        const saved = record.sink ? { savedTrajectories: record.sink.savedCount } : {};
        const { summary = {}, hint } = (await record.describe?.()) ?? {};
        await record.store.finishRun(record.runId, { status: 'failed', finishedAt: nowIso(), summary: { error, signal, ...saved, ...summary } });
        await record.store.close();
        process.stderr.write(`\nspindle: run ${record.runId} ${error}; recorded as failed${hint ? `\n  ${hint}` : ''}\n`);
      } catch (err) {
        process.stderr.write(`\nspindle: run ${record.runId} ${error}; could not record it: ${(err as Error).message}\n`);
      }
      process.exit(EXIT_CODES[signal]);
    })();
  };
  const onInt = () => handle('SIGINT');
  const onTerm = () => handle('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return () => {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  };
}
