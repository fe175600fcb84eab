/**
 * The embedded model's speed, against PyTorch on the same CPU when python3-torch is installed:
 * parameters, prefill tokens/s, decode tokens/s at batch 1/8/32 through the KV-cached sampler,
 * training tokens/s (forward, backward, clipping, AdamW) and peak RSS, for three configs:
 *   reference  d 128, 2 layers, 4 heads, SwiGLU 512, vocab 512, seq 128, batch 16 (the PyTorch baseline)
 *   default    the embedded default model (DEFAULT_MODEL_CONFIG)
 *   25M        the default architecture at about 25M parameters
 * Each config runs in its own child process (peak RSS is per config); the protocol is the one in
 * bench/reference/bench_torch.py, which measures the PyTorch twin (bench/reference/model.py):
 * prefill and decode report the best of 3 windows, training the mean over its timed steps.
 * With N > 1 threads, each config also reports `decodeAtThreads1` (prefill/decode with one thread)
 * and `torchAtThreads1`; the ratios trainVsTorch and decodeVsTorchB32 divide by PyTorch's better
 * figure of the two thread counts (decodeVsTorchB32AtThreads1: our one-thread decode, likewise).
 * usage: npm run bench -- model [--json] [--seconds S] [--threads N] [--configs a,b] [--no-torch]
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MODEL_CONFIG, REFERENCE_BENCH_CONFIG, REFERENCE_BENCH_SHAPE } from '../src/model/builtin-configs.ts';
import type { ModelConfig } from '../src/model/config.ts';
import { flag, positiveIntFlag } from './flags.ts';
import type { BenchFigures } from './run.ts';

const here = dirname(fileURLToPath(import.meta.url));

type BenchSpec = {
  model: ModelConfig;
  seqLen: number;
  batchSize: number;
  prefillLen: number;
  decodePromptLen: number;
  decodeSteps: number;
  decodeBatches: number[];
  /** Timed training steps (after one warm-up step). */
  trainSteps: number;
};

type Figures = {
  params: number;
  prefillTokensPerSec: number;
  decodeTokensPerSecB1: number;
  decodeTokensPerSecB8: number;
  decodeTokensPerSecB32: number;
  trainTokensPerSec: number;
  peakRssMB: number;
};

/** Room for the bench's prompts and completions whatever the config's own context. */
function withContext(cfg: ModelConfig, positions: number): ModelConfig {
  return { ...cfg, maxPositionEmbeddings: Math.max(cfg.maxPositionEmbeddings, positions) };
}

const DECODE = { prefillLen: 128, decodePromptLen: 32, decodeSteps: 32, decodeBatches: [1, 8, 32] };

export const BENCH_SPECS: Record<string, BenchSpec> = {
  reference: {
    model: withContext(REFERENCE_BENCH_CONFIG, 256),
    seqLen: REFERENCE_BENCH_SHAPE.seqLen,
    batchSize: REFERENCE_BENCH_SHAPE.batch,
    ...DECODE,
    trainSteps: 8,
  },
  default: { model: withContext(DEFAULT_MODEL_CONFIG, 256), seqLen: 128, batchSize: 16, ...DECODE, trainSteps: 8 },
  // The default architecture scaled up: d 512, 8 layers, 8 heads (4 kv), SwiGLU 1408 ≈ 24.7M parameters.
  '25M': {
    model: withContext({ ...DEFAULT_MODEL_CONFIG, hiddenSize: 512, intermediateSize: 1408, numLayers: 8, numHeads: 8, numKvHeads: 4, headDim: 64 }, 256),
    seqLen: 128,
    batchSize: 4,
    ...DECODE,
    trainSteps: 2,
  },
};

/** Windows per prefill/decode measurement; the best is reported (as bench_torch.py does). */
const WINDOWS = 3;

/**
 * Calls `fn` once to warm up, then in WINDOWS windows of seconds / WINDOWS (at least one call
 * each); `fn` returns [units, ms] for one call; the best window's units per second.
 */
async function bestRate(fn: () => Promise<[number, number]>, seconds: number): Promise<number> {
  await fn();
  let best = 0;
  for (let w = 0; w < WINDOWS; w++) {
    let units = 0;
    let ms = 0;
    while (ms < (seconds * 1000) / WINDOWS) {
      const [u, t] = await fn();
      units += u;
      ms += t;
    }
    best = Math.max(best, units / (ms / 1000));
  }
  return best;
}

/** `decodeOnly`: prefill and decode figures only (the single-thread run next to an N-thread one). */
async function measureConfig(spec: BenchSpec, threads: number, seconds: number, decodeOnly: boolean): Promise<Partial<Figures>> {
  // The engine's bindings are live: read them from the module after initEngine, not destructured before.
  const engine = await import('../src/model/engine.ts');
  const { countParams, initParams } = await import('../src/model/params.ts');
  const { Sampler } = await import('../src/model/sampler.ts');
  const { measureTrainThroughput } = await import('../src/model/train-throughput.ts');
  const { Rng } = await import('../src/core/random.ts');
  await engine.initEngine({ threads });
  const cfg = spec.model;
  const rng = new Rng(7);
  const prompt = (length: number) => Array.from({ length }, () => rng.int(cfg.vocabSize));
  const params = initParams(cfg, 1);
  // No prefix cache: every prompt is prefilled in full, as PyTorch does.
  const sampler = new Sampler(cfg, params, { prefixCache: false, seed: 1 });
  const greedy = { temperature: 0, stopTokenIds: [] as number[] };

  const prefillTokensPerSec = await bestRate(async () => {
    const t0 = performance.now();
    await sampler.generate([{ promptIds: prompt(spec.prefillLen), maxTokens: 1, ...greedy }]);
    return [spec.prefillLen, performance.now() - t0];
  }, seconds);

  const decode: Record<number, number> = {};
  for (const batch of spec.decodeBatches) {
    // Decode time only: the sampler times its decode loop apart from the prefill.
    decode[batch] = await bestRate(async () => {
      const before = { tokens: sampler.stats.decodeTokens, ms: sampler.stats.decodeMs };
      const requests = Array.from({ length: batch }, () => ({ promptIds: prompt(spec.decodePromptLen), maxTokens: spec.decodeSteps + 1, ...greedy }));
      await sampler.generate(requests);
      return [sampler.stats.decodeTokens - before.tokens, sampler.stats.decodeMs - before.ms];
    }, seconds);
  }
  sampler.dispose();
  engine.tree.dispose(params);
  if (decodeOnly) {
    return { prefillTokensPerSec, decodeTokensPerSecB1: decode[1], decodeTokensPerSecB8: decode[8], decodeTokensPerSecB32: decode[32] };
  }

  const train = await measureTrainThroughput(cfg, { batch: spec.batchSize, seqLen: spec.seqLen, steps: spec.trainSteps, warmupSteps: 1 });
  return {
    params: countParams(cfg),
    prefillTokensPerSec,
    decodeTokensPerSecB1: decode[1],
    decodeTokensPerSecB8: decode[8],
    decodeTokensPerSecB32: decode[32],
    trainTokensPerSec: train.tokensPerSecond,
    peakRssMB: process.resourceUsage().maxRSS / 1024,
  };
}

/** Runs one config in a child process (peak RSS is then that config's alone). */
function measureInChild(name: string, threads: number, seconds: number, mode: 'all' | 'decode'): Record<string, unknown> {
  const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', name, String(threads), String(seconds), mode], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (child.status !== 0) throw new Error(`config ${name}: ${child.stderr.slice(-2000)}`);
  const lines = child.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as Record<string, unknown>;
}

/** A python3 that imports torch, or null. */
function findTorchPython(): string | null {
  for (const python of ['python3', '/usr/bin/python3']) {
    const probe = spawnSync(python, ['-c', 'import torch'], { encoding: 'utf8' });
    if (probe.status === 0) return python;
  }
  return null;
}

function torchFigures(python: string, specs: Record<string, BenchSpec>, threads: number, seconds: number): Record<string, Figures> {
  const configs = Object.fromEntries(Object.entries(specs).map(([name, { trainSteps: _, ...s }]) => [name, s]));
  const proc = spawnSync(python, [join(here, 'reference', 'bench_torch.py'), JSON.stringify({ threads, seconds, configs })], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (proc.status !== 0) throw new Error(`bench_torch.py failed: ${proc.stderr.slice(-2000)}`);
  const lines = proc.stdout.trim().split('\n');
  return (JSON.parse(lines[lines.length - 1]) as { configs: Record<string, Figures> }).configs;
}

function round(figures: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 100) / 100 : v]));
}

export async function run(args: string[], log: (line: string) => void): Promise<BenchFigures> {
  const threads = positiveIntFlag(args, 'threads', availableParallelism());
  const seconds = Number(flag(args, 'seconds', '1'));
  const names = flag(args, 'configs', Object.keys(BENCH_SPECS).join(',')).split(',');
  for (const name of names) if (!BENCH_SPECS[name]) throw new Error(`--configs: unknown config '${name}' (known: ${Object.keys(BENCH_SPECS).join(', ')})`);
  if (!(seconds > 0)) throw new Error(`--seconds must be > 0`);

  const python = args.includes('--no-torch') ? null : findTorchPython();
  // Other processes' load skews every figure here (PyTorch's OpenMP threads most): record it.
  const loadBefore = loadavg()[0];
  const configs: Record<string, Record<string, unknown>> = {};
  for (const name of names) {
    configs[name] = round(measureInChild(name, threads, seconds, 'all'));
    log(`${name}: ${JSON.stringify(configs[name])}`);
    if (threads > 1) {
      // jax-js sends every kernel through its worker pool (~45 µs each vs ~16 µs inline), which
      // costs a one-token decode step more than the second core gains; show both.
      const single = measureInChild(name, 1, seconds, 'decode');
      configs[name].decodeAtThreads1 = round(single);
      log(`${name} (decode, 1 thread): ${JSON.stringify(configs[name].decodeAtThreads1)}`);
    }
  }
  if (python) {
    // PyTorch's OpenMP threads collapse when another process holds a core (e.g. 1,100 vs 6,100
    // train tokens/s on `reference`, 2 threads vs 1, load 4): ratios use its better figure.
    const specs = Object.fromEntries(names.map((n) => [n, BENCH_SPECS[n]]));
    const torchN = torchFigures(python, specs, threads, seconds);
    const torch1 = threads > 1 ? torchFigures(python, specs, 1, seconds) : torchN;
    const ratio = (ours: number, a: number, b: number) => Math.round((ours / Math.max(a, b)) * 1000) / 1000;
    for (const name of names) {
      const [t, t1] = [torchN[name], torch1[name]];
      const c = configs[name] as unknown as Figures;
      const single = configs[name].decodeAtThreads1 as Partial<Figures> | undefined;
      configs[name] = {
        ...configs[name],
        torch: round(t),
        ...(threads > 1 ? { torchAtThreads1: round(t1) } : {}),
        trainVsTorch: ratio(c.trainTokensPerSec, t.trainTokensPerSec, t1.trainTokensPerSec),
        decodeVsTorchB32: ratio(c.decodeTokensPerSecB32, t.decodeTokensPerSecB32, t1.decodeTokensPerSecB32),
        ...(single?.decodeTokensPerSecB32
          ? { decodeVsTorchB32AtThreads1: ratio(single.decodeTokensPerSecB32, t.decodeTokensPerSecB32, t1.decodeTokensPerSecB32) }
          : {}),
      };
      log(`${name} torch: ${JSON.stringify(configs[name].torch)}`);
      if (threads > 1) log(`${name} torch (1 thread): ${JSON.stringify(configs[name].torchAtThreads1)}`);
    }
  } else {
    log('python3-torch not found: no torch figures');
  }
  // Nested figures: run.ts prints them with JSON.stringify as they are.
  const load = { before: Math.round(loadBefore * 100) / 100, after: Math.round(loadavg()[0] * 100) / 100, cores: availableParallelism() };
  log(`load average (1 min) ${load.before} -> ${load.after} on ${load.cores} cores`);
  return { threads, loadAverage1m: load, configs } as unknown as BenchFigures;
}

if (process.argv[2] === '--child') {
  const [name, threads, seconds, mode] = process.argv.slice(3);
  const figures = await measureConfig(BENCH_SPECS[name], Number(threads), Number(seconds), mode === 'decode');
  console.log(JSON.stringify(figures));
  process.exit(0);
}
