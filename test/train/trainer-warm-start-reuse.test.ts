/**
 * `spindle train --warm-start RUN`: a run that starts RL from another run's saved warm start replays
 * that run's RL exactly (same settings and seed), with the KL's reference and the measured row length
 * taken from the record the warm start left; another env or other env options are refused by name.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initEngine } from '../../src/model/engine.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import { loadModelFolder } from '../../src/train/checkpoint-io.ts';
import { parseTrainConfig, type TrainSettings } from '../../src/train/train-config.ts';
import { trainRun, WARM_START_PATH, type TrainOutcome } from '../../src/train/trainer.ts';
import { loadWarmStartSource, WARM_START_RECORD_FILE } from '../../src/train/warm-start-reuse.ts';
import { metricsAt, newTrainRun, pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

// Row length measured from the demonstrations and a KL to the warm start: both must come from the record.
const settings: TrainSettings = parseTrainConfig(
  tinyTrainConfig({
    steps: 2,
    evalEvery: 2,
    checkpointEvery: 2,
    warmStart: { maxSteps: 40, batchSize: 16, demoEpisodes: 60, checkEvery: 20, checkEpisodes: 16, optimizer: { lr: 2e-2, warmupSteps: 5 } },
    update: { rows: 8, rowLength: null },
    loss: { klBeta: 0.5 },
    optimizer: { lr: 3e-3 },
  }),
);

let dir: string;
let store: Store;
let runA: string;
let runB: string;
let a: TrainOutcome;
let b: TrainOutcome;

before(async () => {
  await initEngine({ threads: 1 });
  dir = tempDir('spindle-reuse-');
  store = await openStore(join(dir, 'spindle.db'));
  runA = await newTrainRun(store);
  a = await trainRun({ spec: pickSpec, options: {}, settings, store, runId: runA, resume: null });
  await a.policy.close();
  runB = await newTrainRun(store);
  const source = loadWarmStartSource(runA, join(store.runDir(runA), WARM_START_PATH), 'pick', {});
  b = await trainRun({ spec: pickSpec, options: {}, settings, store, runId: runB, resume: null, warmStartFrom: source });
  await b.policy.close();
});

after(async () => {
  await store?.close();
});

test('the warm start leaves a record of what RL starts from', () => {
  const record = JSON.parse(readFileSync(join(store.runDir(runA), WARM_START_PATH, WARM_START_RECORD_FILE), 'utf8'));
  assert.equal(record.format, 'spindle-warm-start/1');
  assert.equal(record.runId, runA);
  assert.equal(record.env, 'pick');
  assert.equal(record.maxTokens, a.maxTokens);
  assert.ok(Number.isInteger(record.rowLength) && record.rowLength > 0, 'the measured row length');
  assert.equal(record.summary.steps, a.warmStart!.steps);
  assert.equal(record.summary.from, null);
  // The answer budget travels with the model folders too, for `spindle eval --policy model:DIR`.
  assert.equal(loadModelFolder(join(store.runDir(runA), WARM_START_PATH)).assets.answerBudget, a.maxTokens);
  assert.equal(loadModelFolder(join(store.runDir(runA), 'checkpoints/step-000002')).assets.answerBudget, a.maxTokens);
  assert.equal(loadModelFolder(join(store.runDir(runB), 'checkpoints/step-000002')).assets.answerBudget, a.maxTokens);
});

test('RL from a reused warm start logs the same metrics and weights as the run that made it', async () => {
  assert.equal(b.warmStart!.from, runA);
  assert.equal(b.warmStart!.steps, a.warmStart!.steps);
  assert.equal(b.maxTokens, a.maxTokens);
  const ma = await store.getMetrics(runA);
  const mb = await store.getMetrics(runB);
  // No warm-start training of its own: step 0 holds only the evaluation, the same as the source's.
  const evalOf = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => k.startsWith('eval/')));
  assert.ok(!Object.keys(metricsAt(mb, 0)).some((k) => k.startsWith('warmstart/')));
  assert.deepEqual(evalOf(metricsAt(mb, 0)), evalOf(metricsAt(ma, 0)));
  for (const step of [1, 2]) assert.deepEqual(metricsAt(mb, step), metricsAt(ma, step), `step ${step}`);
  assert.ok(metricsAt(ma, 2)['train/updates'] > 0 && metricsAt(ma, 2)['kl/reference'] > 0, 'step 2 trained with a KL term');
  const wa = loadModelFolder(join(store.runDir(runA), 'checkpoints/step-000002')).params;
  const wb = loadModelFolder(join(store.runDir(runB), 'checkpoints/step-000002')).params;
  for (const name of Object.keys(wa)) assert.deepEqual(wb[name].data, wa[name].data, name);
  // The reused weights are this run's warm-start folder too (the final evaluation's warm-start policy).
  const warmA = loadModelFolder(join(store.runDir(runA), WARM_START_PATH)).params;
  const warmB = loadModelFolder(join(store.runDir(runB), WARM_START_PATH)).params;
  for (const name of Object.keys(warmA)) assert.deepEqual(warmB[name].data, warmA[name].data, name);
  // No random-init checkpoint of its own.
  assert.deepEqual((await store.listCheckpoints(runB)).map((r) => r.step), [2]);
  assert.ok(!existsSync(join(store.runDir(runB), 'checkpoints/step-000000')));
});

test('a warm start of another env, with other options or without a record is refused by name', () => {
  const warm = join(store.runDir(runA), WARM_START_PATH);
  assert.throws(() => loadWarmStartSource(runA, warm, 'blackjack', {}), /--warm-start run_\w+: that run trains env 'pick', not 'blackjack'/);
  assert.throws(() => loadWarmStartSource(runA, warm, 'pick', { sab: true }), /other env options: sab true \(warm start: unset\)/);
  assert.throws(() => loadWarmStartSource('run_x', join(dir, 'nowhere'), 'pick', {}), /--warm-start run_x: no warm-start\.json/);
});
