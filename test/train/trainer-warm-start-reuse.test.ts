/**
 * `spindle train --warm-start RUN`: a run that starts RL from another run's saved warm start replays
 * that run's RL exactly (same settings and seed), with the KL's reference and the measured row length
 * taken from the record the warm start left; another env or other env options are refused by name.
 * `--init-from run:RUN@STEP` starts RL from another run's checkpoint instead, with that run's record.
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
import { loadInitSource, loadWarmStartSource, WARM_START_RECORD_FILE } from '../../src/train/warm-start-reuse.ts';
import { learnedWarmStart, metricsAt, newTrainRun, pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

// Row length measured from the demonstrations and a KL to the warm start: both must come from the record.
const settings: TrainSettings = parseTrainConfig(
  tinyTrainConfig({
    steps: 2,
    evalEvery: 2,
    checkpointEvery: 2,
    warmStart: learnedWarmStart,
    update: { rows: 8, rowLength: null },
    loss: { klBeta: 0.5 },
    optimizer: { lr: 3e-3 },
  }),
);

let dir: string;
let store: Store;
let runA: string;
let runB: string;
let runC: string;
let a: TrainOutcome;
let b: TrainOutcome;
let c: TrainOutcome;

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
  runC = await newTrainRun(store);
  const init = loadInitSource(runA, 2, join(store.runDir(runA), 'checkpoints/step-000002'), join(store.runDir(runA), WARM_START_PATH), 'pick');
  c = await trainRun({ spec: pickSpec, options: {}, settings: { ...settings, steps: 1, checkpointEvery: 1, evalEvery: 1 }, store, runId: runC, resume: null, warmStartFrom: init });
  await c.policy.close();
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
  // Step 0 is the reused weights in this run's warm-start folder (no copy under checkpoints/).
  assert.deepEqual((await store.listCheckpoints(runB)).map((r) => [r.step, r.path, r.policyVersion]), [
    [0, WARM_START_PATH, 0],
    [2, 'checkpoints/step-000002', 2],
  ]);
  assert.ok(!existsSync(join(store.runDir(runB), 'checkpoints/step-000000')));
});

test('a warm start of another env, with other options or without a record is refused by name', () => {
  const warm = join(store.runDir(runA), WARM_START_PATH);
  assert.throws(() => loadWarmStartSource(runA, warm, 'blackjack', {}), /--warm-start run_\w+: that run trains env 'pick', not 'blackjack'/);
  assert.throws(() => loadWarmStartSource(runA, warm, 'pick', { sab: true }), /other env options: sab true \(warm start: unset\)/);
  assert.throws(() => loadWarmStartSource('run_x', join(dir, 'nowhere'), 'pick', {}), /--warm-start run_x: no warm-start\.json/);
});

test('RL from another run\'s checkpoint starts from its weights, with the KL taken to them', async () => {
  assert.equal(c.warmStart!.from, `${runA}@2`);
  assert.equal(c.maxTokens, a.maxTokens);
  // The checkpoint (what run:A@2 loads as a policy) is this run's starting weights and the KL's reference.
  const source = loadModelFolder(join(store.runDir(runA), 'checkpoints/step-000002')).params;
  const start = loadModelFolder(join(store.runDir(runC), WARM_START_PATH)).params;
  for (const name of Object.keys(source)) assert.deepEqual(start[name].data, source[name].data, name);
  const record = JSON.parse(readFileSync(join(store.runDir(runC), WARM_START_PATH, WARM_START_RECORD_FILE), 'utf8'));
  assert.equal(record.runId, runC);
  assert.equal(record.summary.from, `${runA}@2`);
  const step1 = metricsAt(await store.getMetrics(runC), 1);
  // Step 1's one update ran at the starting weights, so a KL to them is exactly 0; a KL to A's warm
  // start (which A's two steps moved away from) would not be.
  assert.equal(step1['kl/beta'], 0.5);
  assert.equal(step1['train/updates'], 1);
  assert.equal(step1['kl/reference'], 0);
  const warmA = loadModelFolder(join(store.runDir(runA), WARM_START_PATH)).params;
  assert.ok(Object.keys(source).some((name) => warmA[name].data.some((v, i) => v !== source[name].data[i])), 'A@2 is not A\'s warm start');
  // It moved away from the source: its step-1 weights differ from the checkpoint it began at.
  const after1 = loadModelFolder(join(store.runDir(runC), 'checkpoints/step-000001')).params;
  assert.ok(Object.keys(source).some((name) => after1[name].data.some((v, i) => v !== source[name].data[i])), 'RL changed the weights');
});

test('a checkpoint of another env or a run without a warm-start record is refused by name', () => {
  const checkpoint = join(store.runDir(runA), 'checkpoints/step-000002');
  assert.throws(() => loadInitSource(runA, 2, checkpoint, join(store.runDir(runA), WARM_START_PATH), 'blackjack'), /--init-from run:run_\w+@2: that run trains env 'pick', not 'blackjack'/);
  assert.throws(() => loadInitSource('run_x', 2, checkpoint, join(dir, 'nowhere'), 'pick'), /--init-from run:run_x@2: no warm-start\.json/);
});
