/**
 * A capacity control: can the default model, at its size and with `spindle train`'s warm start
 * machinery, represent the oracle's policy when shown it? The same default model (tokenizer and
 * weights from scratch), the env's train preset and the warm start of `spindle train --env NAME`,
 * except that the demonstrations are played by the env's oracle (warm-start-demos.ts demoPolicy)
 * instead of random legal actions, for exactly --steps supervised steps and no answers-only steps
 * (their groups of every legal answer side by side would pull the choice back toward uniform; the
 * oracle's demonstrations make none anyway). No RL follows; the final evaluation plays the imitation
 * beside random, the simple baselines and the oracle on the held-out seeds, and its normalised score
 * is the ceiling supervised imitation reaches where RL's result falls short. A diagnostic only, like
 * blackjack-exact-values: a real run never sees the oracle.
 * usage: npm run bench -- oracle-imitation --env NAME [--env-opt k=v ...] [--steps 400] [--seed 0]
 *        [--threads N] [--episodes 300] [--config FILE] [--json]
 * --config: a train config merged over the env's preset, under this bench's own settings (steps 0,
 * the warm start's step count).
 */
import { parseArgs } from 'node:util';
import { readConfigFile } from '../src/cli/config-file.ts';
import { formatEvalReport } from '../src/cli/eval-report.ts';
import { trainPresetOf } from '../src/envs/env.ts';
import type { EvalReport } from '../src/eval/evaluate.ts';
import { parseEnvOptionPairs, resolveEnvOptions } from '../src/envs/options.ts';
import { loadEnvSpec } from '../src/envs/registry.ts';
import { oraclePolicy } from '../src/policy/scripted.ts';
import { applyFlagOverrides, mergeTrainConfig, parseTrainConfig } from '../src/train/train-config.ts';
import { finalEvaluation } from '../src/train/trainer-final.ts';
import { integerFlagValue } from './flags.ts';
import { tempTrainRun } from './temp-train-run.ts';
import type { BenchFigures } from './run.ts';

const VALUE_FLAGS = ['env', 'env-opt', 'steps', 'seed', 'threads', 'episodes', 'config'] as const;
type FlagName = (typeof VALUE_FLAGS)[number];
type Flags = Partial<Record<FlagName, string[]>>;

/** Every flag's values in order (--env-opt may repeat, the others may not); parseArgs refuses unknown flags and missing values. */
function parseFlags(args: string[]): Flags {
  const { values } = parseArgs({ args, strict: true, options: Object.fromEntries(VALUE_FLAGS.map((f) => [f, { type: 'string', multiple: true }])) });
  const flags = values as Flags;
  for (const name of VALUE_FLAGS) if (name !== 'env-opt' && (flags[name]?.length ?? 0) > 1) throw new Error(`--${name} given twice`);
  return flags;
}

function intFlag(flags: Flags, name: FlagName, fallback: number | null, min: number): number | null {
  const text = flags[name]?.[0];
  return text === undefined ? fallback : integerFlagValue(name, text, min);
}

/** The report with policy `from` (the temporary run's `run:ID`) named `to`, in its rows and head-to-head tables. */
function renamed(report: EvalReport, from: string, to: string): EvalReport {
  const name = (n: string) => (n === from ? to : n);
  const rekey = <T>(table: Record<string, T>): Record<string, T> => Object.fromEntries(Object.entries(table).map(([k, v]) => [name(k), v]));
  return {
    ...report,
    policies: report.policies.map((p) => ({ ...p, policy: name(p.policy) })),
    headToHead: rekey(Object.fromEntries(Object.entries(report.headToHead).map(([k, row]) => [k, rekey(row)]))),
    headToHeadCounts: rekey(Object.fromEntries(Object.entries(report.headToHeadCounts).map(([k, row]) => [k, rekey(row)]))),
  };
}

export async function run(args: string[], log: (line: string) => void): Promise<BenchFigures> {
  const flags = parseFlags(args);
  const envName = flags.env?.[0];
  if (envName === undefined) throw new Error('--env is required (a built-in env name or a path to an env module)');
  const steps = intFlag(flags, 'steps', 400, 1)!;
  const seed = intFlag(flags, 'seed', 0, 0)!;
  const threads = intFlag(flags, 'threads', null, 1);
  const episodes = intFlag(flags, 'episodes', 300, 1)!;
  const spec = await loadEnvSpec(envName);
  const options = resolveEnvOptions(spec, parseEnvOptionPairs(flags['env-opt'] ?? []));
  if (typeof spec.create(options).oracle !== 'function') throw new Error(`--env ${envName}: the env has no oracle to imitate`);
  // As `spindle train` builds its settings (the env's preset under the config and flags), with this
  // bench's config: no RL steps, a warm start of exactly `steps` supervised steps.
  const config = {
    steps: 0,
    finalEvalEpisodes: episodes,
    // trainRun evaluates the warm start on its own before RL; the final evaluation below is the measure.
    evalEpisodes: 1,
    warmStart: { minSteps: steps, maxSteps: steps, answerSteps: 0 },
  };
  const configPath = flags.config?.[0];
  // Read and checked as `spindle train --config` reads it (a JSON object).
  const own = configPath === undefined ? {} : applyFlagOverrides(readConfigFile(configPath), {});
  const settings = parseTrainConfig(mergeTrainConfig(mergeTrainConfig(trainPresetOf(spec, options), own), applyFlagOverrides(config, { seed, ...(threads === null ? {} : { threads }) })));
  log(`oracle imitation on ${spec.name} ${JSON.stringify(options)}: ${steps} supervised steps on ${settings.warmStart.demoEpisodes} oracle episodes, seed ${seed}`);

  const start = performance.now();
  let warmStartLine = '';
  const { outcome, store, runId, threads: usedThreads, seconds: trainSeconds } = await tempTrainRun(spec, options, settings, 'spindle-bench-imitate-', (e) => {
    if (e.type === 'warm-start-step' && (e.step % 25 === 0 || e.step === 1)) log(`  step ${e.step}/${e.maxSteps}: loss ${e.loss.toFixed(4)}, ${((performance.now() - start) / 1000).toFixed(0)} s`);
    if (e.type === 'warm-start-check') {
      warmStartLine = `sampled (temperature ${settings.episode.temperature}) after ${e.check.step} steps: invalid ${(100 * e.check.invalidRate).toFixed(1)} %, mean return ${e.check.meanReturn.toFixed(4)}`;
      log(`  ${warmStartLine}`);
    }
  }, { warmStartDemoPolicy: oraclePolicy() });
  let final: Awaited<ReturnType<typeof finalEvaluation>>;
  const finalStart = performance.now();
  try {
    // No RL step ran: the trained policy is the warm start itself, so it is not played twice.
    final = await finalEvaluation({ spec, options, settings, trained: outcome.policy, runDir: outcome.runDir, warmStartPath: null, maxTurns: outcome.maxTurns, maxTokens: outcome.maxTokens });
  } finally {
    await outcome.policy.close();
  }
  const finalSeconds = (performance.now() - finalStart) / 1000;
  const metrics = await store.getMetrics(runId);
  await store.close();
  const finalLoss = metrics.find((m) => m.step === 0 && m.name === 'warmstart/final_loss')?.value ?? null;
  const wallSeconds = (performance.now() - start) / 1000;

  const report = renamed(final.report, outcome.policy.name, 'imitation');
  for (const line of formatEvalReport(report)) log(line);
  const score = final.trained.normalisedScore;
  log(
    `${spec.name}: imitation after ${outcome.warmStart?.steps ?? 0} supervised steps normalised ${score?.value?.toFixed(3) ?? 'n/a'} (${score?.basis ?? 'n/a'}); ` +
      `${wallSeconds.toFixed(0)} s (warm start ${(outcome.warmStart?.seconds ?? 0).toFixed(0)} s, final evaluation ${finalSeconds.toFixed(0)} s), threads ${usedThreads}`,
  );

  const figures: BenchFigures = {
    env: spec.name,
    envOptions: JSON.stringify(options),
    seed,
    supervisedSteps: outcome.warmStart?.steps ?? 0,
    demoEpisodes: settings.warmStart.demoEpisodes,
    finalLoss,
    sampledInvalidRate: outcome.warmStart?.invalidRate ?? null,
    episodes,
    threads: usedThreads,
    wallSeconds,
    trainSeconds,
    warmStartSeconds: outcome.warmStart?.seconds ?? null,
    languageModel: settings.warmStart.languageModel,
    finalEvalSeconds: finalSeconds,
    normalisedScore: score?.value ?? null,
    normalisedScoreBasis: score?.basis ?? null,
  };
  for (const p of report.policies) {
    const finite = (x: number) => (Number.isFinite(x) ? x : null);
    figures[`${p.policy}.meanReturn`] = finite(p.meanReturn);
    figures[`${p.policy}.ci95Low`] = finite(p.ci95[0]);
    figures[`${p.policy}.ci95High`] = finite(p.ci95[1]);
    figures[`${p.policy}.exactReturn`] = p.exactReturn;
    figures[`${p.policy}.invalidRate`] = finite(p.invalidRate);
    figures[`${p.policy}.normalisedScore`] = p.normalisedScore?.value ?? null;
    figures[`${p.policy}.failed`] = p.failed;
    for (const [name, value] of Object.entries(p.metrics)) figures[`${p.policy}.${name}`] = finite(value);
  }
  return figures;
}
