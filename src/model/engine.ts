/**
 * The tensor engine (jax-js on its Wasm backend), started on demand.
 *
 * jax-js builds its Wasm backend, and decides whether it has a worker pool, while its module is
 * evaluated. Node 20 has no `Worker`, so the module must be loaded only after the shim is in place:
 * that is why every runtime use of jax-js goes through the live bindings below (`np`, `jit`, ...)
 * that `initEngine()` fills, and nothing imports '@jax-js/jax' for values (types are fine).
 */
import { availableParallelism } from 'node:os';
import type * as Jax from '@jax-js/jax';
import { installIteratorHelpers } from './iterator-polyfill.ts';
import { NodeWorkerShim } from './worker-shim.ts';

export type EngineOptions = {
  /** Compute threads; default all cores. 1 runs kernels on the main thread (no worker pool). */
  threads?: number;
};

export type EngineInfo = { threads: number; device: string };

/** A jax-js array. Functions in src/model consume the arrays passed to them (pass `x.ref` to keep one). */
export type Tensor = Jax.Array;

function notStarted<T>(name: string): T {
  const fail = (): never => {
    throw new Error(`jax-js is not started: await initEngine() before using ${name} from src/model/engine.ts`);
  };
  return new Proxy(function () {}, { get: fail, apply: fail, construct: fail }) as T;
}

// Live ESM bindings, set once by initEngine; importers see the real values after it resolves.
export let np: typeof Jax.numpy = notStarted('np');
export let nn: typeof Jax.nn = notStarted('nn');
export let lax: typeof Jax.lax = notStarted('lax');
export let tree: typeof Jax.tree = notStarted('tree');
export let jit: typeof Jax.jit = notStarted('jit');
export let grad: typeof Jax.grad = notStarted('grad');
export let valueAndGrad: typeof Jax.valueAndGrad = notStarted('valueAndGrad');
export let vjp: typeof Jax.vjp = notStarted('vjp');
export let blockUntilReady: typeof Jax.blockUntilReady = notStarted('blockUntilReady');
export let profiler: typeof Jax.profiler = notStarted('profiler');
export let random: typeof Jax.random = notStarted('random');

let started: Promise<EngineInfo> | null = null;
let startedThreads = 0;

/** Starts jax-js once (idempotent); a second call must ask for the same thread count or none. */
export function initEngine(options: EngineOptions = {}): Promise<EngineInfo> {
  const threads = options.threads ?? availableParallelism();
  if (!Number.isInteger(threads) || threads < 1) {
    return Promise.reject(new Error(`initEngine: threads must be a positive integer, got ${String(options.threads)}`));
  }
  if (started) {
    if (options.threads !== undefined && threads !== startedThreads) {
      return Promise.reject(
        new Error(`initEngine: the engine already runs with ${startedThreads} threads; it cannot switch to ${threads}`),
      );
    }
    return started;
  }
  startedThreads = threads;
  started = start(threads);
  return started;
}

/** The thread count initEngine started with (0 before it ran). */
export function engineThreads(): number {
  return startedThreads;
}

async function start(threads: number): Promise<EngineInfo> {
  installIteratorHelpers();
  const g = globalThis as Record<string, unknown>;
  // jax-js sizes its pool from navigator.hardwareConcurrency while its module loads; lend it one then.
  const navigatorBefore = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  if (threads > 1) {
    // The shim stays: jax-js checks `typeof Worker` again when it compiles kernels (shared memory).
    if (typeof g.Worker === 'undefined') g.Worker = NodeWorkerShim;
    Object.defineProperty(globalThis, 'navigator', {
      value: { hardwareConcurrency: threads, userAgent: `Node.js/${process.version}` },
      configurable: true,
      writable: true,
    });
  }
  let jax: typeof Jax;
  try {
    jax = await import('@jax-js/jax');
  } finally {
    if (threads > 1) {
      if (navigatorBefore) Object.defineProperty(globalThis, 'navigator', navigatorBefore);
      else delete g.navigator;
    }
  }
  await jax.init('wasm');
  jax.defaultDevice('wasm');
  np = jax.numpy;
  nn = jax.nn;
  lax = jax.lax;
  tree = jax.tree;
  jit = jax.jit;
  grad = jax.grad;
  valueAndGrad = jax.valueAndGrad;
  vjp = jax.vjp;
  blockUntilReady = jax.blockUntilReady;
  profiler = jax.profiler;
  random = jax.random;
  if (threads > 1) await checkPool(threads);
  return { threads, device: 'wasm' };
}

/** Runs one kernel large enough to use the pool and checks that workers started. */
async function checkPool(threads: number): Promise<void> {
  const x = np.ones([64, 64]);
  await np.matmul(x.ref, x).data();
  if (NodeWorkerShim.started === 0) {
    throw new Error(
      `initEngine({ threads: ${threads} }): jax-js was loaded before initEngine (something imported ` +
        `'@jax-js/jax' for values), so it has no worker pool. Import np/jit/... from src/model/engine.ts instead.`,
    );
  }
}
