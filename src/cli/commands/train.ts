/**
 * `spindle train --env E`: trains the default model on an env (tokenizer and weights from scratch,
 * warm start on the action format, RL on the env's reward), then evaluates it beside the warm start,
 * random, the simple baselines and the oracle on the same held-out seeds. Writes learning-curve.svg
 * and report.md into the run folder. Everything is validated before anything is written; progress
 * goes to stderr; with --json one object is the last line of stdout.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../../core/errors.ts';
import { newId, nowIso } from '../../core/ids.ts';
import type { Run } from '../../core/trajectory.ts';
import { trainPresetOf, type EnvSpec } from '../../envs/env.ts';
import { envOptionFlags, parseEnvOptionPairs, resolveEnvOptions } from '../../envs/options.ts';
import { loadEnvSpec } from '../../envs/registry.ts';
import { formatEvalReport } from '../eval-report.ts';
import { initEngine } from '../../model/engine.ts';
import { writeTrainReport } from '../../report/train-report.ts';
import { openStore } from '../../store/open.ts';
import { defaultDbPath } from '../../store/paths.ts';
import { describeOwner, liveOwner, ownerState } from '../../store/run-owner.ts';
import type { Store } from '../../store/store.ts';
import { loadTrainCheckpoint, type TrainCheckpoint } from '../../train/checkpoint-io.ts';
import { applyFlagOverrides, mergeTrainConfig, parseTrainConfig, type TrainFlagOverrides, type TrainSettings } from '../../train/train-config.ts';
import { trainRun, WARM_START_PATH } from '../../train/trainer.ts';
import { loadInitSource, loadWarmStartSource, type WarmStartSource } from '../../train/warm-start-reuse.ts';
import { findRunCheckpoint, parseRunRef } from '../../policy/run-checkpoint.ts';
import { finalEvaluation, type FinalEval } from '../../train/trainer-final.ts';
import { finalSummary } from '../../train/trainer-report-summary.ts';
import { parseTrainerState, type TrainerState } from '../../train/trainer-state.ts';
import { readConfigFile } from '../config-file.ts';
import { markRunFailedOnInterrupt } from '../interrupt.ts';
import { makeOutput } from '../output.ts';
import { startProgress, type Progress } from '../progress.ts';
import { trainProgressPrinter } from '../train-progress.ts';

export interface TrainFlags extends TrainFlagOverrides {
  env?: string;
  envOpt?: string[];
  config?: string;
  resume?: string;
  warmStart?: string;
  initFrom?: string;
  db?: string;
  json?: boolean;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySpec = EnvSpec<any>;

interface Plan {
  spec: AnySpec;
  options: Record<string, unknown>;
  settings: TrainSettings;
  envSource: string;
  resume: { runId: string; checkpoint: TrainCheckpoint<TrainerState> } | null;
  warmStartFrom: WarmStartSource | null;
}

/** `--resume RUN`: the run's latest checkpoint; only --steps (to go further) and --threads may change. */
async function planResume(flags: TrainFlags): Promise<Plan> {
  const changed = (['envOpt', 'config', 'seed', 'groupSize', 'batchSeeds', 'lr', 'evalEvery', 'checkpointEvery', 'warmStart', 'initFrom'] as const).filter((k) =>
    k === 'envOpt' ? (flags.envOpt ?? []).length > 0 : flags[k] !== undefined,
  );
  if (changed.length > 0) throw new UsageError(`--resume continues a run with its own settings; only --steps and --threads may be given (not --${changed.map(kebab).join(', --')})`);
  return withStoredTrainRun('--resume', flags.resume!, flags.db, async (store, run) => {
    refuseLiveRun(run);
    const records = await store.listCheckpoints(run.id);
    const latest = records.at(-1);
    if (!latest || latest.step === 0) throw new UsageError(`--resume ${run.id}: the run has no checkpoint after its warm start; start a new run`);
    const checkpoint = loadTrainCheckpoint(resolve(store.runDir(run.id), latest.path), parseTrainerState);
    const envSource = typeof run.config.envSource === 'string' ? run.config.envSource : run.env;
    if (flags.env !== undefined && flags.env !== envSource && flags.env !== run.env) {
      throw new UsageError(`--env ${flags.env}: run ${run.id} trains env '${envSource}'`);
    }
    const spec = await loadEnvSpec(envSource);
    const options = resolveEnvOptions(spec, checkpoint.state.envOptions);
    const settings = parseTrainConfig({ ...checkpoint.state.config, ...(flags.steps !== undefined ? { steps: flags.steps } : {}), ...(flags.threads !== undefined ? { threads: flags.threads } : {}) });
    if (settings.steps <= checkpoint.state.step) {
      throw new UsageError(`--resume ${run.id}: the run is at step ${checkpoint.state.step} of ${settings.steps}; pass --steps N with N > ${checkpoint.state.step} to go further`);
    }
    return { spec, options, settings, envSource, resume: { runId: run.id, checkpoint }, warmStartFrom: null };
  });
}

/** A run still being trained must not be resumed beside itself (two processes writing one run's checkpoints). */
function refuseLiveRun(run: Run): void {
  const live = liveOwner(run);
  if (live) throw new UsageError(`--resume ${run.id}: the run is still running in ${describeOwner(live)}; stop it first (Ctrl-C records it as failed)`);
  if (run.status === 'running' && (!run.owner || ownerState(run.owner) === 'unknown')) {
    const who = run.owner ? describeOwner(run.owner) : 'a process this store did not record';
    process.stderr.write(`spindle: run ${run.id} is marked running by ${who}, which cannot be checked from here; resuming it (make sure that process has stopped)\n`);
  }
}

/** `use` on stored train run `runId` of the database `db` (the store closed after); refused, naming `flag`, when either is missing. */
async function withStoredTrainRun<T>(flag: string, runId: string, db: string | undefined, use: (store: Store, run: Run) => Promise<T>): Promise<T> {
  const path = resolve(db ?? defaultDbPath());
  if (!existsSync(path)) throw new UsageError(`${flag} ${runId}: there is no database at ${path} (pass --db)`);
  const store = await openStore(path);
  try {
    const run = await store.getRun(runId);
    if (!run) throw new UsageError(`${flag} ${runId}: no such run in ${path} (see spindle runs)`);
    if (run.kind !== 'train') throw new UsageError(`${flag} ${runId}: run is a ${run.kind} run, not a train run`);
    return await use(store, run);
  } finally {
    await store.close();
  }
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

async function plan(flags: TrainFlags): Promise<Plan> {
  if (flags.resume !== undefined) return planResume(flags);
  if (flags.env === undefined) throw new UsageError('--env is required (a built-in env name or a path to an env module), or --resume RUN');
  const spec = await loadEnvSpec(flags.env);
  const options = resolveEnvOptions(spec, parseEnvOptionPairs(flags.envOpt ?? []));
  const file = flags.config === undefined ? undefined : readConfigFile(flags.config);
  const settings = parseTrainConfig(mergeTrainConfig(trainPresetOf(spec, options), applyFlagOverrides(file, flags)));
  if (flags.warmStart !== undefined && flags.initFrom !== undefined) throw new UsageError('--warm-start and --init-from both name where RL starts; give one');
  const warmStartFrom =
    flags.warmStart !== undefined
      ? await reusableWarmStart(flags.warmStart, flags.db, spec.name, options)
      : flags.initFrom !== undefined
        ? await initCheckpoint(flags.initFrom, flags.db, spec.name)
        : null;
  return { spec, options, settings, envSource: flags.env, resume: null, warmStartFrom };
}

/** `--warm-start RUN`: that train run's warm start, for this env and these options. */
function reusableWarmStart(runId: string, db: string | undefined, env: string, options: Record<string, unknown>): Promise<WarmStartSource> {
  return withStoredTrainRun('--warm-start', runId, db, async (store, run) => loadWarmStartSource(run.id, join(store.runDir(run.id), WARM_START_PATH), env, options));
}

/** `--init-from run:RUN[@STEP]`: that train run's checkpoint (the latest when no step is given), for the same env with any options. */
async function initCheckpoint(ref: string, db: string | undefined, env: string): Promise<WarmStartSource> {
  if (!ref.startsWith('run:')) throw new UsageError(`--init-from ${ref}: give a train run's checkpoint as run:RUN[@STEP] (see spindle runs)`);
  const { runId, step } = parseRunRef(ref.slice('run:'.length), '--init-from');
  return withStoredTrainRun('--init-from', runId, db, async (store, run) => {
    const found = await findRunCheckpoint(store, { runId: run.id, step }, '--init-from');
    return loadInitSource(run.id, found.step, found.dir, join(store.runDir(run.id), WARM_START_PATH), env);
  });
}

export async function trainCommand(flags: TrainFlags): Promise<void> {
  const out = makeOutput(!!flags.json);
  const started = performance.now();
  // Validate everything before anything is written.
  const { spec, options, settings, envSource, resume, warmStartFrom } = await plan(flags);
  await initEngine(settings.threads === null ? {} : { threads: settings.threads });

  const store: Store = await openStore(flags.db);
  let runId: string;
  if (resume) {
    runId = resume.runId;
    await store.reopenRun(runId);
  } else {
    const run: Run = {
      id: newId('run'),
      kind: 'train',
      env: spec.name,
      envOptions: options,
      policy: 'default-model',
      config: { ...settings, envSource, ...(warmStartFrom ? { warmStartFrom: warmStartFrom.from } : {}) },
      status: 'running',
      createdAt: nowIso(),
      finishedAt: null,
      summary: null,
    };
    await store.createRun(run);
    runId = run.id;
  }
  const printer = trainProgressPrinter(settings.steps);
  const db = flags.db === undefined ? '' : ` --db ${flags.db}`;
  const stopHandlingInterrupts = markRunFailedOnInterrupt({
    store,
    runId,
    describe: async () => {
      const latest = (await store.listCheckpoints(runId)).at(-1);
      if (!latest || latest.step === 0) return { summary: { lastCheckpointStep: null } };
      const summary = { lastCheckpointStep: latest.step };
      // Stopped in the final evaluation: nothing is left to train, only to evaluate.
      if (latest.step >= settings.steps) {
        const env = [`--env ${envSource}`, ...envOptionFlags(spec, options)].join(' ');
        return { summary, hint: `it had trained all ${latest.step} steps: its policy loads as run:${runId} (spindle eval ${env} --policy run:${runId}${db})` };
      }
      return { summary, hint: `its latest checkpoint is step ${latest.step}: continue with spindle train --resume ${runId}${db}` };
    },
  });
  try {
    const outcome = await trainRun({ spec, options, settings, store, runId, resume: resume?.checkpoint ?? null, warmStartFrom, onEvent: printer });
    let final: FinalEval;
    const bar: { current: Progress | null } = { current: null };
    const finalStart = performance.now();
    try {
      process.stderr.write(`[final] evaluating on ${settings.finalEvalEpisodes} held-out seeds (greedy)\n`);
      final = await finalEvaluation({
        spec,
        options,
        settings,
        trained: outcome.policy,
        runDir: outcome.runDir,
        warmStartPath: outcome.warmStart?.path ?? null,
        maxTurns: outcome.maxTurns,
        maxTokens: outcome.maxTokens,
        // A live line per policy, as in spindle eval (a ten-turn env's policy can take many minutes).
        onPolicy: (name, n) => {
          bar.current = startProgress(`  ${name}`, n);
        },
        onEpisode: (_name, done, meanReturn) => bar.current?.update(done, `mean return ${meanReturn.toFixed(3)}`),
        onPolicyEnd: () => {
          bar.current?.stop();
          bar.current = null;
        },
      });
    } finally {
      bar.current?.stop();
      await outcome.policy.close();
    }
    const finalEvalSeconds = (performance.now() - finalStart) / 1000;
    // This session's final evaluation is part of the run's wall time too.
    const wallSeconds = outcome.wallSeconds + finalEvalSeconds;
    const metrics = await store.getMetrics(runId);
    const files = writeTrainReport(outcome.runDir, {
      runId,
      env: spec.name,
      envOptions: options,
      config: { ...settings, envSource },
      steps: outcome.steps,
      episodes: outcome.episodes,
      wallSeconds,
      metrics,
      warmStart: outcome.warmStart,
      finalEval: final.report,
      trainedPolicy: outcome.policy.name,
      weightAverage: outcome.weightAverage,
      handOver: outcome.handOver,
      finalEvalSeconds,
    });
    const summary = {
      run: runId,
      env: spec.name,
      envOptions: options,
      steps: outcome.steps,
      episodes: outcome.episodes,
      wallSeconds,
      sessionSeconds: (performance.now() - started) / 1000,
      ...finalSummary(final, outcome.warmStart?.steps ?? null),
      optimalReturn: final.report.optimalReturn,
      weightAverage: outcome.weightAverage,
      handOver: outcome.handOver,
      checkpoint: outcome.lastCheckpoint,
      report: files.report,
      learningCurve: files.curve,
    };
    await store.finishRun(runId, { status: 'finished', finishedAt: nowIso(), summary });
    for (const line of formatEvalReport(final.report)) out.line(line);
    out.line();
    out.line(`run ${runId}: ${outcome.steps} RL steps, ${outcome.episodes} episodes, ${wallSeconds.toFixed(1)} s (warm start included)`);
    out.line(`  report ${files.report}`);
    out.line(`  learning curve ${files.curve}`);
    out.result(summary);
  } catch (error) {
    await store.finishRun(runId, { status: 'failed', finishedAt: nowIso(), summary: { error: (error as Error).message } }).catch(() => undefined);
    throw error;
  } finally {
    stopHandlingInterrupts();
    await store.close();
  }
}
