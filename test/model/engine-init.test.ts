import assert from 'node:assert/strict';
import { test } from 'node:test';
import { engineThreads, initEngine, jit, np } from '../../src/model/engine.ts';
import { NodeWorkerShim } from '../../src/model/worker-shim.ts';

test('importing the engine has no side effects; using it before initEngine says what to do', () => {
  assert.equal(typeof (globalThis as Record<string, unknown>).Worker, 'undefined');
  assert.equal(engineThreads(), 0);
  assert.throws(() => np.array([1]), /await initEngine\(\) before using np/);
});

test('initEngine with 2 threads runs kernels on a worker pool, is idempotent, refuses a different thread count', async () => {
  const info = await initEngine({ threads: 2 });
  assert.deepEqual(info, { threads: 2, device: 'wasm' });
  assert.equal(NodeWorkerShim.started, 2);
  assert.equal((globalThis as Record<string, unknown>).navigator, undefined, 'the borrowed navigator is given back');
  assert.deepEqual(await initEngine(), info);
  assert.deepEqual(await initEngine({ threads: 2 }), info);
  await assert.rejects(initEngine({ threads: 1 }), /already runs with 2 threads/);
  // A matmul large enough to be split across the workers gives exact integer results.
  const n = 96;
  const a = np.arange(n * n).reshape([n, n]).mod(7);
  const b = np.ones([n, n]);
  const c = (await jit((x: typeof a, y: typeof b) => np.matmul(x, y))(a.ref, b).data()) as Float32Array;
  const rowSum = (r: number): number => Array.from({ length: n }, (_, j) => (r * n + j) % 7).reduce((s, v) => s + v, 0);
  assert.equal(c[0], rowSum(0));
  assert.equal(c[5 * n + 3], rowSum(5));
  assert.equal(c[n * n - 1], rowSum(n - 1));
  a.dispose();
  // einsum needs iterator helpers Node 20 lacks; initEngine provides them.
  const e = await np.einsum('ij,jk->ik', np.ones([2, 3]), np.ones([3, 4])).data();
  assert.deepEqual(Array.from(e), new Array(8).fill(3));
});
