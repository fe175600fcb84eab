/**
 * Training throughput of RL updates on the layouts a dense env's step makes: each decision's
 * answers share its prompt, every sample shares the system turn (the layout's prefix), and rows
 * longer than one attention chunk hold a prompt and its answers. The default model (random
 * weights) and the trainer's own pieces: LayoutShapes, rlTensors, the KL reference's frozen
 * forward, rlLoss (clipped ratio, k3 to the reference, entropy) and ParamTrainer's gradient
 * accumulation, as `spindle train` runs the dense preset. Synthetic samples in the bandit's shape
 * (a 32-token system turn, then 440 tokens of the decision's own prompt and 8 answers of 11 tokens,
 * in rows of 544 behind the system turn), so it needs no stored run. The language-model step of the
 * same model is `model-train`.
 * usage: npm run bench -- rl-step [--json] [--threads 2] [--decisions 40] [--prompt 440]
 *        [--answers 8] [--length 544] [--passes 2]
 */
import { DEFAULT_MODEL_CONFIG } from '../src/model/builtin-configs.ts';
import { initEngine, tree } from '../src/model/engine.ts';
import { ParamTrainer } from '../src/model/param-trainer.ts';
import { initParams } from '../src/model/params.ts';
import { Rng } from '../src/core/random.ts';
import { parseLossConfig } from '../src/train/loss-config.ts';
import { LayoutShapes, type LayoutSample } from '../src/train/rl-batch.ts';
import { frozenLogprobs, rlLayoutInputs, rlLoss, type RlStepInputs } from '../src/train/trainer-loss.ts';
import { positiveIntFlag } from './flags.ts';
import type { BenchFigures } from './run.ts';

const SYSTEM_TOKENS = 32;
const ANSWER_TOKENS = 11;

/** Decisions of `answers` answers each behind their own prompt, all behind one system turn. */
function decisionSamples(decisions: number, promptTokens: number, answers: number, vocab: number, rng: Rng): LayoutSample[] {
  const token = () => 1 + rng.int(vocab - 1);
  const system = Array.from({ length: SYSTEM_TOKENS }, token);
  const samples: LayoutSample[] = [];
  for (let d = 0; d < decisions; d++) {
    const prompt = [...system, ...Array.from({ length: promptTokens }, token)];
    for (let a = 0; a < answers; a++) {
      const answer = Array.from({ length: ANSWER_TOKENS }, token);
      const advantage = rng.next() < 0.5 ? -1 : 1;
      const mask = [...prompt.map(() => 0), ...answer.map(() => 1)];
      samples.push({
        tokens: [...prompt, ...answer],
        lossMask: mask,
        advantages: mask.map((m) => m * advantage),
        logprobs: mask.map((m) => -m),
      });
    }
  }
  return samples;
}

export async function run(args: string[], log: (line: string) => void): Promise<BenchFigures> {
  const threads = positiveIntFlag(args, 'threads', 2);
  const decisions = positiveIntFlag(args, 'decisions', 40);
  const promptTokens = positiveIntFlag(args, 'prompt', 440);
  const answers = positiveIntFlag(args, 'answers', 8);
  const length = positiveIntFlag(args, 'length', 544);
  const passes = positiveIntFlag(args, 'passes', 2);
  await initEngine({ threads });
  const cfg = { ...DEFAULT_MODEL_CONFIG, maxPositionEmbeddings: Math.max(DEFAULT_MODEL_CONFIG.maxPositionEmbeddings, SYSTEM_TOKENS + length + 1) };
  const samples = decisionSamples(decisions, promptTokens, answers, cfg.vocabSize, new Rng(1, 0xbe7c));
  const shapes = new LayoutShapes({ rows: null, length });
  const { layouts, tooLong } = shapes.layouts(samples);
  if (tooLong > 0) throw new Error(`${tooLong} samples do not fit a row of ${length} behind the prefix; raise --length or lower --prompt`);
  const computed = layouts.reduce((n, l) => n + l.computedTokens, 0);
  log(`${samples.length} answers in ${layouts.length} layouts of ${shapes.rows} rows x ${length} behind a prefix of ${shapes.prefixLength}; ${computed} positions computed a pass`);

  const klBeta = 0.1;
  const trainer = new ParamTrainer<RlStepInputs>(initParams(cfg, 1), rlLoss(cfg, parseLossConfig({ klBeta })), { lr: 1e-4 });
  const reference = { params: initParams(cfg, 1), forward: frozenLogprobs(cfg) };
  // One pass is one RL step's update: every layout's gradient accumulated, then one optimiser step.
  const pass = async (): Promise<number> => {
    const t0 = performance.now();
    for (const layout of layouts) await trainer.accumulate(rlLayoutInputs(cfg, layout, reference, klBeta));
    await trainer.applyAccumulated();
    return (performance.now() - t0) / 1000;
  };
  const compileSeconds = await pass();
  log(`first pass (compiles): ${compileSeconds.toFixed(2)} s`);
  const seconds: number[] = [];
  for (let i = 0; i < passes; i++) {
    seconds.push(await pass());
    log(`pass ${i + 1}: ${seconds[i].toFixed(2)} s, ${Math.round(computed / seconds[i])} positions/s`);
  }
  trainer.dispose();
  tree.dispose(reference.params);
  const mean = seconds.reduce((a, b) => a + b, 0) / seconds.length;
  return {
    threads,
    layouts: layouts.length,
    rows: shapes.rows,
    rowLength: length,
    prefix: shapes.prefixLength,
    answers: samples.length,
    positionsPerPass: computed,
    secondsPerPass: mean,
    positionsPerSecond: computed / mean,
    msPerLayout: (1000 * mean) / layouts.length,
  };
}
