/** `run:RUN[@STEP]`: a run's checkpoint found through the store, loaded like model:DIR (a LoRA adapter merged in). */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import type { Message } from '../../src/core/messages.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { initEngine } from '../../src/model/engine.ts';
import type { EmbeddedPolicy } from '../../src/policy/embedded.ts';
import '../../src/policy/embedded-register.ts';
import { parseRunRef, resolveRunCheckpoint } from '../../src/policy/run-checkpoint.ts';
import '../../src/policy/run-checkpoint-register.ts';
import { resolvePolicy, validPolicyForms, type PolicyContext } from '../../src/policy/resolve.ts';
import { openStore } from '../../src/store/open.ts';
import { runCli } from '../cli/run-cli.ts';
import { storeWithRun } from '../eval/run-store.ts';
import { logitsOf, saveTinyLoraModel, saveTinyModel, TEST_LORA, tinyLoraAdapters, tinyModel } from '../eval/tiny-checkpoint.ts';

const usage = (pattern: RegExp) => (error: unknown) => error instanceof UsageError && pattern.test(error.message);
const messages: Message[] = [{ role: 'user', content: 'Your hand: 10, 6 (sum 16, no usable ace). Dealer shows: 9.' }];

before(async () => {
  await initEngine({ threads: 1 });
});

async function greedy(policy: EmbeddedPolicy) {
  const [c] = await policy.complete({ messages, tools: [], maxTokens: 6, temperature: 0 });
  return c;
}

test('RUN[@STEP] parses, and a bad one is a UsageError naming the flag', () => {
  assert.deepEqual(parseRunRef('run_abc', '--policy'), { runId: 'run_abc', step: null });
  assert.deepEqual(parseRunRef('run_abc@200', '--policy'), { runId: 'run_abc', step: 200 });
  assert.throws(() => parseRunRef('', '--policy'), usage(/^--policy run:RUN\[@STEP\] needs a run id/));
  assert.throws(() => parseRunRef('run_abc@latest', '--policy'), usage(/STEP must be a non-negative integer, got 'latest'/));
  assert.throws(() => parseRunRef('../etc@1', 'SOURCE'), usage(/^SOURCE run:.*is not a run id/));
  assert.ok(validPolicyForms().includes('run:RUN[@STEP]'));
});

test('the latest step by default, @STEP exactly; a missing run or step lists what the store holds', async () => {
  const model = tinyModel(1);
  const run = await storeWithRun([10, 20], (dir, step) => saveTinyModel(dir, { ...model, host: tinyModel(step).host }));
  const latest = await resolveRunCheckpoint(run.runId, run.db, '--policy');
  assert.equal(latest.step, 20);
  assert.equal(latest.dir, run.dirs[20]);
  assert.deepEqual(latest.steps, [10, 20]);
  assert.equal((await resolveRunCheckpoint(`${run.runId}@10`, run.db, '--policy')).dir, run.dirs[10]);

  await assert.rejects(resolveRunCheckpoint(`${run.runId}@15`, run.db, '--policy'), usage(/no checkpoint at step 15; available steps: 10, 20/));
  await assert.rejects(resolveRunCheckpoint('run_nope', run.db, '--policy'), usage(/no run 'run_nope' in the store; runs with checkpoints: run_test0001 \(steps 10, 20\)/));
  const missingDb = join(run.root, 'elsewhere', 'spindle.db');
  await assert.rejects(resolveRunCheckpoint(run.runId, missingDb, '--policy'), usage(/there is no database at/));
  assert.equal(existsSync(missingDb), false, 'resolving must not create a database');

  // A run without checkpoints, and a record whose folder is gone.
  const store = await openStore(run.db);
  await store.createRun({ id: 'run_empty', kind: 'train', env: 'blackjack', envOptions: {}, policy: 'x', config: {}, status: 'running', createdAt: '2025-01-01T00:00:00Z', finishedAt: null, summary: null });
  await store.saveCheckpoint({ runId: run.runId, step: 30, path: 'checkpoints/step-000030', policyVersion: 30, createdAt: '2025-01-01T00:00:00Z', metrics: {} });
  await store.close();
  await assert.rejects(resolveRunCheckpoint('run_empty', run.db, '--policy'), usage(/run 'run_empty' \(train, running\) has no checkpoints/));
  await assert.rejects(resolveRunCheckpoint(run.runId, run.db, '--policy'), usage(/checkpoint folder of step 30 is missing/));
});

test('run:RUN@STEP loads the same weights as model:DIR of that folder, under its own name and version', async () => {
  const model = tinyModel(1);
  const run = await storeWithRun([10, 20], (dir, step) => saveTinyModel(dir, { ...model, host: tinyModel(step).host }), 'run_test0002');
  const context: PolicyContext = { spec: blackjackSpec, options: blackjackSpec.options.parse({}), db: run.db };
  const fromRun = (await resolvePolicy(`run:${run.runId}@10`, context)) as EmbeddedPolicy;
  const fromDir = (await resolvePolicy(`model:${run.dirs[10]}`, context)) as EmbeddedPolicy;
  const other = (await resolvePolicy(`run:${run.runId}`, context)) as EmbeddedPolicy;
  assert.equal(fromRun.name, `run:${run.runId}@10`);
  assert.equal(other.name, `run:${run.runId}@20`);
  const [a, b, c] = [await greedy(fromRun), await greedy(fromDir), await greedy(other)];
  assert.deepEqual(a.completionTokenIds, b.completionTokenIds);
  assert.deepEqual(a.modelLogprobs, b.modelLogprobs);
  assert.notDeepEqual(a.modelLogprobs, c.modelLogprobs);
  assert.equal(a.policyVersion, 10);
  await Promise.all([fromRun.close(), fromDir.close(), other.close()]);
});

test('a LoRA checkpoint (base + adapter/) is served with its adapter: logprobs match the base model run with the adapter', async () => {
  const model = tinyModel(3);
  const adapters = tinyLoraAdapters(model.cfg, 4);
  const run = await storeWithRun([5], (dir) => saveTinyLoraModel(dir, model, adapters), 'run_test0003');
  const policy = (await resolvePolicy(`run:${run.runId}`, { spec: blackjackSpec, options: {}, db: run.db })) as EmbeddedPolicy;
  const c = await greedy(policy);
  const prompt = policy.promptIds(messages, []);
  const ids = c.completionTokenIds!;
  const V = model.cfg.vocabSize;
  const withAdapter = await logitsOf(model.cfg, model.host, [...prompt, ...ids], { config: TEST_LORA, adapters });
  const baseOnly = await logitsOf(model.cfg, model.host, [...prompt, ...ids]);
  const logprob = (logits: Float32Array, position: number, id: number) => {
    const row = logits.subarray(position * V, (position + 1) * V);
    const max = Math.max(...row);
    const lse = max + Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
    return row[id] - lse;
  };
  const expected = ids.map((id, j) => logprob(withAdapter, prompt.length - 1 + j, id));
  const base = ids.map((id, j) => logprob(baseOnly, prompt.length - 1 + j, id));
  expected.forEach((lp, j) => assert.ok(Math.abs(lp - c.modelLogprobs![j]) < 1e-4, `token ${j}: ${lp} vs ${c.modelLogprobs![j]}`));
  assert.ok(base.some((lp, j) => Math.abs(lp - c.modelLogprobs![j]) > 1e-3), 'the adapter must change the model');
  await policy.close();
});

test('spindle play --policy run:RUN plays the run\'s latest checkpoint', async () => {
  const model = tinyModel(1);
  const run = await storeWithRun([7], (dir) => saveTinyModel(dir, model), 'run_test0004');
  const r = runCli(['play', '--env', 'blackjack', '--policy', `run:${run.runId}`, '--db', run.db, '--episodes', '2', '--max-tokens', '4', '--json'], run.root);
  assert.equal(r.code, 0, r.stderr);
  const out = r.json();
  assert.equal(out.policy, `run:${run.runId}@7`);
  assert.equal(out.finished, 2);
  const bad = runCli(['play', '--env', 'blackjack', '--policy', `run:${run.runId}@8`, '--db', run.db, '--episodes', '2'], run.root);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--policy run:run_test0004@8: run 'run_test0004' has no checkpoint at step 8; available steps: 7/);
});
