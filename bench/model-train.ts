/**
 * Training throughput of the embedded model (forward, backward, clipping, AdamW under one jit) at
 * several thread counts, a 1024³ matmul at the same thread counts (does threading pay?), and
 * memory over many steps (RSS must stay flat: a leaked array per step shows up here).
 * Each thread count runs in its own child process (the engine's thread count is fixed per process).
 * `--shapes` trains other batch shapes of the same token count per step as well (rows × row length:
 * a long row costs more per token, its attention being quadratic; layers.ts CAUSAL_QUERY_CHUNK).
 * usage: npm run bench -- model-train [--json] [--threads 1,2] [--config reference|default]
 *        [--steps 10] [--memory-steps 300] [--shapes 16x128,4x512,1x2048]
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MODEL_CONFIG, REFERENCE_BENCH_CONFIG, REFERENCE_BENCH_SHAPE } from '../src/model/builtin-configs.ts';
import type { BenchFigures } from './run.ts';

const CONFIGS = { reference: REFERENCE_BENCH_CONFIG, default: DEFAULT_MODEL_CONFIG };

type Shape = { batch: number; seqLen: number };
type ChildFigures = {
  threads: number;
  matmulGflops: number;
  tokensPerSecond: number;
  msPerStep: number;
  rssGrowthMb: number;
  steps: number;
  /** Tokens per second of each extra shape, by `BxT`. */
  shapes: Record<string, number>;
};

function parseShapes(text: string): Shape[] {
  if (text === '') return [];
  return text.split(',').map((part) => {
    const m = /^(\d+)x(\d+)$/.exec(part.trim());
    if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new Error(`--shapes: '${part}' is not ROWSxLENGTH (e.g. 4x512)`);
    return { batch: Number(m[1]), seqLen: Number(m[2]) };
  });
}

async function child(threads: number, config: keyof typeof CONFIGS, steps: number, shapes: Shape[]): Promise<ChildFigures> {
  const engine = await import('../src/model/engine.ts');
  const { measureTrainThroughput } = await import('../src/model/train-throughput.ts');
  await engine.initEngine({ threads });
  const { np, jit } = engine;
  const n = 1024;
  const matmul = jit((a: ReturnType<typeof np.ones>, b: ReturnType<typeof np.ones>) => np.matmul(a, b));
  const a = np.ones([n, n]);
  const b = np.ones([n, n]);
  await matmul(a.ref, b.ref).data();
  const reps = 5;
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) await matmul(a.ref, b.ref).data();
  const matmulGflops = (2 * n ** 3 * reps) / ((performance.now() - t0) / 1000) / 1e9;
  a.dispose();
  b.dispose();
  const r = await measureTrainThroughput(CONFIGS[config], { ...REFERENCE_BENCH_SHAPE, steps, warmupSteps: 2 });
  const extra: Record<string, number> = {};
  for (const shape of shapes) {
    // Positions up to the row length (the configs' own context may be shorter).
    const cfg = { ...CONFIGS[config], maxPositionEmbeddings: Math.max(CONFIGS[config].maxPositionEmbeddings, shape.seqLen + 1) };
    extra[`${shape.batch}x${shape.seqLen}`] = (await measureTrainThroughput(cfg, { ...shape, steps, warmupSteps: 1 })).tokensPerSecond;
  }
  return { threads, matmulGflops, tokensPerSecond: r.tokensPerSecond, msPerStep: r.msPerStep, rssGrowthMb: r.rssGrowthMb, steps, shapes: extra };
}

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(name);
  return i === -1 ? fallback : args[i + 1];
}

function spawnChild(threads: number, config: string, steps: number, shapes: string): ChildFigures {
  const proc = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', String(threads), config, String(steps), shapes], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (proc.status !== 0) throw new Error(`threads ${threads}: ${proc.stderr.slice(-2000)}`);
  const lines = proc.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as ChildFigures;
}

export async function run(args: string[], log: (line: string) => void): Promise<BenchFigures> {
  const threadCounts = option(args, '--threads', '1,2').split(',').map(Number);
  const config = option(args, '--config', 'reference');
  if (!(config in CONFIGS)) throw new Error(`--config: unknown '${config}' (known: ${Object.keys(CONFIGS).join(', ')})`);
  const steps = Number(option(args, '--steps', '10'));
  const memorySteps = Number(option(args, '--memory-steps', '300'));
  const shapes = option(args, '--shapes', '');
  parseShapes(shapes); // a bad flag fails before any child runs
  const figures: BenchFigures = { config, batch: REFERENCE_BENCH_SHAPE.batch, seqLen: REFERENCE_BENCH_SHAPE.seqLen };
  for (const threads of threadCounts) {
    const f = spawnChild(threads, config, steps, shapes);
    log(`threads ${threads}: matmul 1024³ ${f.matmulGflops.toFixed(1)} GFLOP/s; training ${f.tokensPerSecond.toFixed(0)} tokens/s (${f.msPerStep.toFixed(0)} ms/step)`);
    figures[`matmulGflopsT${threads}`] = Math.round(f.matmulGflops * 10) / 10;
    figures[`trainTokensPerSecT${threads}`] = Math.round(f.tokensPerSecond);
    for (const [shape, rate] of Object.entries(f.shapes)) {
      log(`threads ${threads}: training ${shape} (rows x length) ${rate.toFixed(0)} tokens/s`);
      figures[`trainTokensPerSec_${shape}_T${threads}`] = Math.round(rate);
    }
  }
  if (memorySteps > 0) {
    const threads = threadCounts[threadCounts.length - 1];
    const f = spawnChild(threads, config, memorySteps, '');
    log(`memory: RSS grew ${f.rssGrowthMb.toFixed(1)} MB over ${memorySteps} steps (threads ${threads}, ${f.tokensPerSecond.toFixed(0)} tokens/s)`);
    figures.memorySteps = memorySteps;
    figures.rssGrowthMb = Math.round(f.rssGrowthMb * 10) / 10;
  }
  return figures;
}

if (process.argv[2] === '--child') {
  const [threads, config, steps, shapes] = process.argv.slice(3);
  console.log(JSON.stringify(await child(Number(threads), config as keyof typeof CONFIGS, Number(steps), parseShapes(shapes ?? ''))));
  process.exit(0);
}
