/** A store in a scratch folder holding a `train` run with checkpoint folders and their records, laid out as the trainer writes them. */
import { join } from 'node:path';
import { openStore } from '../../src/store/open.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

export interface RunStore {
  /** The scratch folder (the database and runs/ live in its .spindle/). */
  root: string;
  db: string;
  runId: string;
  /** Absolute checkpoint folder by step. */
  dirs: Record<number, string>;
}

/** Creates the run and, for each step, writes its folder with `write` and records it. */
export async function storeWithRun(steps: number[], write: (dir: string, step: number) => void, runId = 'run_test0001'): Promise<RunStore> {
  const root = tempDir('spindle-run-');
  const db = join(root, '.spindle', 'spindle.db');
  const store = await openStore(db);
  const dirs: Record<number, string> = {};
  try {
    await store.createRun({
      id: runId,
      kind: 'train',
      env: 'blackjack',
      envOptions: { natural: false, sab: false },
      policy: 'model:default',
      config: {},
      status: 'finished',
      createdAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
      summary: null,
    });
    for (const step of steps) {
      const path = join('checkpoints', `step-${String(step).padStart(6, '0')}`);
      dirs[step] = join(store.runDir(runId), path);
      write(dirs[step], step);
      await store.saveCheckpoint({ runId, step, path, policyVersion: step, createdAt: new Date().toISOString(), metrics: {} });
    }
  } finally {
    await store.close();
  }
  return { root, db, runId, dirs };
}
