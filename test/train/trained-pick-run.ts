/** A trainer test's setup: a fresh store in a temp folder and one run of the pick env trained in it (one thread). */
import { join } from 'node:path';
import { initEngine } from '../../src/model/engine.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import type { TrainSettings } from '../../src/train/train-config.ts';
import { trainRun, type TrainOutcome } from '../../src/train/trainer.ts';
import { tempDir } from '../fixtures/temp-dir.ts';
import { newTrainRun, pickSpec } from './trainer-fixtures.ts';

export interface TrainedPickRun {
  dir: string;
  store: Store;
  runId: string;
  /** Its policy is open; the test closes it (and the store). */
  outcome: TrainOutcome;
}

export async function trainedPickRun(prefix: string, settings: TrainSettings): Promise<TrainedPickRun> {
  await initEngine({ threads: 1 });
  const dir = tempDir(prefix);
  const store = await openStore(join(dir, 'spindle.db'));
  const runId = await newTrainRun(store);
  const outcome = await trainRun({ spec: pickSpec, options: {}, settings, store, runId, resume: null });
  return { dir, store, runId, outcome };
}
