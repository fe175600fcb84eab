/**
 * Training throughput of the embedded model: full steps (forward, backward, clipping, AdamW) on
 * synthetic token sequences, as the benchmarks and the reference comparison with PyTorch run them.
 */
import { Rng } from '../core/random.ts';
import type { ModelConfig } from './config.ts';
import { engineThreads, type Tensor } from './engine.ts';
import { batchTensors, tokenLogprobs, type BatchTensors } from './logprobs.ts';
import { ParamTrainer } from './param-trainer.ts';
import { initParams, type Params } from './params.ts';
import { buildTokenBatch } from './token-batch.ts';

/** Mean next-token NLL over masked positions: -Σ mask·logp / Σ mask. Consumes params and batch. */
export function maskedNll(cfg: ModelConfig, params: Params, batch: BatchTensors): Tensor {
  const { mask, ...inputs } = batch;
  const { logprobs } = tokenLogprobs(cfg, params, inputs);
  const count = mask.ref.sum();
  return logprobs.mul(mask).sum().neg().div(count);
}

export type ThroughputOptions = {
  batch: number;
  seqLen: number;
  /** Timed steps (after `warmupSteps` untimed ones, which include jit compilation). */
  steps: number;
  warmupSteps?: number;
  seed?: number;
  lr?: number;
};

export type ThroughputResult = {
  tokensPerSecond: number;
  msPerStep: number;
  steps: number;
  tokensPerStep: number;
  threads: number;
  firstLoss: number;
  lastLoss: number;
  /** Resident set size growth over the timed steps, in MB (memory must stay flat). */
  rssGrowthMb: number;
};

/** Trains `cfg` from a seeded init on random sequences; the engine must be started. */
export async function measureTrainThroughput(cfg: ModelConfig, options: ThroughputOptions): Promise<ThroughputResult> {
  const rng = new Rng(options.seed ?? 0, 0x7b);
  const makeBatch = (): BatchTensors => {
    // Every sequence: one context token, then seqLen tokens scored (seqLen positions per row).
    const samples = Array.from({ length: options.batch }, () => ({
      promptIds: [rng.int(cfg.vocabSize)],
      completionIds: Array.from({ length: options.seqLen }, () => rng.int(cfg.vocabSize)),
    }));
    return batchTensors(cfg, buildTokenBatch(samples));
  };
  const trainer = new ParamTrainer<BatchTensors>(initParams(cfg, options.seed ?? 0), (p, b) => maskedNll(cfg, p, b), {
    lr: options.lr ?? 1e-3,
    maxGradNorm: 1,
  });
  try {
    let firstLoss = NaN;
    for (let i = 0; i < (options.warmupSteps ?? 2); i++) firstLoss = (await trainer.step(makeBatch())).loss;
    const rssBefore = process.memoryUsage().rss;
    let lastLoss = NaN;
    let busy = 0;
    for (let i = 0; i < options.steps; i++) {
      const batch = makeBatch(); // host-side batch building is not the engine's time
      const t0 = performance.now();
      lastLoss = (await trainer.step(batch)).loss;
      busy += performance.now() - t0;
    }
    const tokensPerStep = options.batch * options.seqLen;
    return {
      tokensPerSecond: (tokensPerStep * options.steps) / (busy / 1000),
      msPerStep: busy / options.steps,
      steps: options.steps,
      tokensPerStep,
      threads: engineThreads(),
      firstLoss,
      lastLoss,
      rssGrowthMb: (process.memoryUsage().rss - rssBefore) / 2 ** 20,
    };
  } finally {
    trainer.dispose();
  }
}
