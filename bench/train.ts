/**
 * Where `spindle train`'s wall time goes: a short real run (default model on an env, warm start, a
 * few RL steps; no final evaluation) with the run's defaults and the env's preset, then per phase its seconds and share
 * of wall time, rollout and training throughput, and the time per RL step (the figure to multiply
 * by the default step count).
 * usage: npm run bench -- train [--json] [--env blackjack] [--steps 10] [--threads N] [--config '{"groupSize":8}']
 */
import type { MetricPoint } from '../src/core/trajectory.ts';
import { trainPresetOf } from '../src/envs/env.ts';
import { loadEnvSpec } from '../src/envs/registry.ts';
import { mergeTrainConfig, parseTrainConfig, type TrainConfig } from '../src/train/train-config.ts';
import { flag, positiveIntFlag } from './flags.ts';
import { tempTrainRun } from './temp-train-run.ts';
import type { BenchFigures } from './run.ts';

function sum(metrics: readonly MetricPoint[], name: string, from = 1): number {
  return metrics.filter((m) => m.name === name && m.step >= from).reduce((a, m) => a + m.value, 0);
}

export async function run(args: string[], log: (line: string) => void): Promise<BenchFigures> {
  const envName = flag(args, 'env', 'blackjack');
  const steps = positiveIntFlag(args, 'steps', 10);
  const overrides = JSON.parse(flag(args, 'config', '{}')) as TrainConfig;
  const threadsFlag = flag(args, 'threads', '');
  const spec = await loadEnvSpec(envName);
  const options = spec.options.parse({}) as Record<string, unknown>;
  // As `spindle train` runs it: the env's preset under the config.
  const settings = parseTrainConfig(
    mergeTrainConfig(trainPresetOf(spec, options), {
      ...overrides,
      steps,
      evalEvery: overrides.evalEvery ?? steps,
      checkpointEvery: overrides.checkpointEvery ?? steps,
      ...(threadsFlag ? { threads: Number(threadsFlag) } : {}),
    }),
  );
  const { outcome, store, runId, threads, seconds: wall } = await tempTrainRun(spec, options, settings, 'spindle-bench-train-', (e) => {
    if (e.type === 'warm-start-check') log(`warm start check at step ${e.check.step}: invalid ${(100 * e.check.invalidRate).toFixed(1)}%`);
    if (e.type === 'step') {
      const m = e.metrics;
      log(
        `step ${e.step}: ${m['time/step_s'].toFixed(2)} s (rollout ${m['time/rollout_s'].toFixed(2)}, train ${m['time/train_s'].toFixed(2)}), ` +
          `reward ${m['reward/mean'].toFixed(3)}, ${m['train/updates'] ?? 0} updates`,
      );
    }
  });
  await outcome.policy.close();
  const metrics = await store.getMetrics(runId);
  await store.close();
  const warmSeconds = outcome.warmStart?.seconds ?? 0;
  const warmSteps = outcome.warmStart?.steps ?? 0;

  const phases = {
    warmStart: warmSeconds,
    rollout: sum(metrics, 'time/rollout_s'),
    advantage: sum(metrics, 'time/advantage_s'),
    train: sum(metrics, 'time/train_s'),
    eval: sum(metrics, 'time/eval_s', 0),
    checkpoint: sum(metrics, 'time/checkpoint_s'),
  };
  const accounted = Object.values(phases).reduce((a, b) => a + b, 0);
  const other = Math.max(0, wall - accounted);
  const rlSeconds = sum(metrics, 'time/step_s');
  const completionTokens = sum(metrics, 'tokens/completion');
  const computedTokens = sum(metrics, 'tokens/train_computed');
  const episodes = outcome.episodes;
  const rolloutRate = completionTokens / phases.rollout;
  const trainRate = computedTokens / phases.train;
  const figures: BenchFigures = {
    env: envName,
    threads,
    steps,
    groupSize: settings.groupSize,
    batchSeeds: settings.batchSeeds,
    episodes,
    wallSeconds: wall,
    warmStartSteps: warmSteps,
    secondsPerStep: rlSeconds / steps,
    episodesPerSecond: episodes / (phases.rollout + phases.advantage + phases.train),
    rolloutTokensPerSecond: rolloutRate,
    trainTokensPerSecond: trainRate,
    projectedMinutesForDefaultSteps: (warmSeconds + (rlSeconds / steps) * parseTrainConfig(trainPresetOf(spec, options)).steps) / 60,
  };
  for (const [name, seconds] of Object.entries({ ...phases, other })) {
    figures[`${name}Seconds`] = seconds;
    figures[`${name}Share`] = seconds / wall;
  }
  log(`wall ${wall.toFixed(1)} s for model + warm start (${warmSteps} steps) + ${steps} RL steps (${episodes} episodes), threads ${threads}`);
  for (const [name, seconds] of Object.entries({ ...phases, other })) log(`  ${name.padEnd(11)} ${seconds.toFixed(1).padStart(7)} s  ${((100 * seconds) / wall).toFixed(1).padStart(5)}%`);
  log(`  per RL step ${(rlSeconds / steps).toFixed(2)} s; rollout ${rolloutRate.toFixed(0)} generated tok/s; training ${trainRate.toFixed(0)} tok/s`);
  return figures;
}
