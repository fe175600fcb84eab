/** A benchmark's train run: the engine started, a store in a fresh temporary folder, the run recorded, then trainRun. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId, nowIso } from '../src/core/ids.ts';
import type { EnvSpec } from '../src/envs/env.ts';
import { initEngine } from '../src/model/engine.ts';
import { openStore } from '../src/store/open.ts';
import type { Store } from '../src/store/store.ts';
import type { TrainSettings } from '../src/train/train-config.ts';
import { trainRun, type TrainEvent, type TrainOutcome, type TrainRunInput } from '../src/train/trainer.ts';

export interface TempTrainRun {
  outcome: TrainOutcome;
  /** Open; the caller closes it (after reading the run's metrics). */
  store: Store;
  runId: string;
  threads: number;
  /** Seconds of trainRun (model, warm start, RL and its evaluations). */
  seconds: number;
}

export async function tempTrainRun<O extends Record<string, unknown>>(
  spec: EnvSpec<O>,
  options: O,
  settings: TrainSettings,
  folderPrefix: string,
  onEvent: (e: TrainEvent) => void,
  /** trainRun's programmatic-only inputs (bench/oracle-imitation.ts: the demonstrations' policy). */
  extra: Pick<TrainRunInput<O>, 'warmStartDemoPolicy'> = {},
): Promise<TempTrainRun> {
  const { threads } = await initEngine(settings.threads === null ? {} : { threads: settings.threads });
  const store = await openStore(join(mkdtempSync(join(tmpdir(), folderPrefix)), 'spindle.db'));
  const runId = newId('run');
  await store.createRun({ id: runId, kind: 'train', env: spec.name, envOptions: options, policy: 'default-model', config: {}, status: 'running', createdAt: nowIso(), finishedAt: null, summary: null });
  const start = performance.now();
  const outcome = await trainRun({ spec, options, settings, store, runId, resume: null, onEvent, ...extra });
  return { outcome, store, runId, threads, seconds: (performance.now() - start) / 1000 };
}
