/** A broken policy stops a training run's evaluation (and RL step) with the reasons, instead of learning from nothing. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Policy } from '../../src/policy/policy.ts';
import { assertSomeFinished } from '../../src/rollout/summary.ts';
import { periodicEval } from '../../src/train/trainer-eval.ts';
import { pickSpec } from './trainer-fixtures.ts';

const broken: Policy = {
  name: 'broken',
  contextLength: null,
  complete: async () => {
    throw new RangeError('Allocation exceeds the 4 GiB memory32 limit');
  },
};

test('an evaluation whose every episode failed throws, counting them with the reason', async () => {
  await assert.rejects(
    periodicEval({ spec: pickSpec, options: {}, policy: broken, episodes: 6, maxTurns: 1, maxTokens: 8, concurrency: 4 }),
    /evaluation on held-out seeds: every one of the 6 episodes failed \(6 × policy 'broken' failed: Allocation exceeds the 4 GiB memory32 limit\)/,
  );
});

test('some finished episodes, or none played, pass', () => {
  const summary = (finished: number, failed: number) =>
    ({ episodes: { requested: finished, finished, completed: finished - failed, truncated: 0, failed }, failureReasons: { boom: failed } }) as unknown as Parameters<typeof assertSomeFinished>[0];
  assert.doesNotThrow(() => assertSomeFinished(summary(5, 4), 'x'));
  assert.doesNotThrow(() => assertSomeFinished(summary(0, 0), 'x'));
  assert.throws(() => assertSomeFinished(summary(3, 3), 'RL step 7'), /^Error: RL step 7: every one of the 3 episodes failed \(3 × boom\)$/);
});
