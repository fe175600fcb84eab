/**
 * Offline training from stored groups (`spindle train --from-store RUN`): the scored trajectories of
 * a run (e.g. recorded by `spindle proxy` in front of `spindle serve`), their advantages per task,
 * samples of exactly the recorded ids, then `steps` passes of optimiser updates on a given model
 * whose tokenizer made those ids. Each step takes π_old from the weights at its start and corrects
 * for the sampler with the recorded logprobs (trainer-loss.ts, loss-rl.ts), scoring the policy at
 * the calls' recorded sampling temperature. The result is a new `train` run with a checkpoint
 * folder that `--policy run:RUN` and `model:DIR` load, its metrics in the store.
 */
import { nowIso, newId } from '../core/ids.ts';
import { Rng } from '../core/random.ts';
import type { Run } from '../core/trajectory.ts';
import { tree } from '../model/engine.ts';
import { applyLora, initLora, mergeLoraHost, type LoraConfig } from '../model/lora.ts';
import { ParamTrainer, type StepResult } from '../model/param-trainer.ts';
import { toHostParams, toParams, type HostParams, type Params } from '../model/params.ts';
import type { Store } from '../store/store.ts';
import { UsageError } from '../core/errors.ts';
import { saveTrainCheckpoint } from './checkpoint-io.ts';
import { parseOfflineTrainConfig, type OfflineTrainConfig, type OfflineTrainSettings } from './from-store-config.ts';
import { checkTokenizerFits, type StartModel } from './from-store-model.ts';
import { samplesFromTrajectories, selectionMetrics, type StoredSamples } from './from-store-samples.ts';
import { selectStoredTrajectories, type StoreSelection } from './from-store-select.ts';
import { trainedLora } from './lora-config.ts';
import { parseLossConfig } from './loss-config.ts';
import { LayoutShapes, type RlLayout } from './rl-batch.ts';
import { rlTensors } from './rl-batch-forward.ts';
import { finiteMetrics, updateMetrics } from './trainer-metrics.ts';
import { frozenLogprobs, logprobsOnLayout, rlLoss, type RlStepInputs } from './trainer-loss.ts';
import { miniBatches } from './mini-batches.ts';
import { offlineTemperature, recordedTemperatures } from './recorded-temperature.ts';

export const OFFLINE_STATE_FORMAT = 'spindle-offline-trainer/1';

export interface OfflineTrainInput {
  store: Store;
  selection: StoreSelection;
  model: StartModel;
  config?: OfflineTrainConfig;
  /** The new run's id (default: a fresh `offline_…`). */
  runId?: string;
  /** Recorded model ids accepted as this model's tokenizer (from-store-model.ts). */
  acceptModelIds?: readonly string[];
  onStep?: (step: number, metrics: Record<string, number>) => void;
}

export interface OfflineTrainOutcome {
  runId: string;
  runDir: string;
  /** The checkpoint folder, relative to runDir. */
  checkpoint: string;
  steps: number;
  /** The sampling temperature the policy was scored at (OfflineTrainConfig.temperature). */
  temperature: number;
  data: StoredSamples;
  /** Metrics of each step, index 0 = step 1. */
  metrics: Record<string, number>[];
  /** The starting weights and the trained ones (with LoRA: the base with the adapter merged), on the host. */
  startParams: HostParams;
  params: HostParams;
  /** With LoRA: its settings and the trained adapter tensors (PEFT names). */
  adapter: { lora: LoraConfig; adapters: HostParams } | null;
}

/** A step's inputs; with LoRA the frozen base rides along (it is not what the optimiser trains). */
type OfflineStepInputs = RlStepInputs & { base?: Params };

export async function trainFromStore(input: OfflineTrainInput): Promise<OfflineTrainOutcome> {
  const settings: OfflineTrainSettings = parseOfflineTrainConfig(input.config ?? {});
  const { store, model } = input;
  const selected = await selectStoredTrajectories(store, input.selection);
  if (selected.unknownTasks.length > 0) {
    throw new UsageError(`--task: run '${input.selection.runId}' has no trajectory of task ${selected.unknownTasks.map((t) => `'${t}'`).join(', ')}`);
  }
  checkTokenizerFits(selected.trajectories, model, input.acceptModelIds);
  // The model's own end-of-turn ids, unless the config names some: finished calls missing one are counted.
  const endOfTurnTokenIds = settings.samples.endOfTurnTokenIds?.length ? settings.samples.endOfTurnTokenIds : model.assets.stopTokenIds;
  const data = samplesFromTrajectories(selected, {
    ...(settings.advantage ? { advantage: settings.advantage } : {}),
    samples: { ...settings.samples, endOfTurnTokenIds },
  });
  if (data.batch.samples.length === 0) {
    const skipped = Object.entries(selected.skipped).filter(([, n]) => n > 0).map(([r, n]) => `${n} ${r}`);
    throw new UsageError(
      `--from-store ${input.selection.runId}: nothing to train on: ${selected.read} trajectories read, ${selected.trajectories.length} usable` +
        `${skipped.length > 0 ? ` (skipped: ${skipped.join(', ')})` : ''}, ${data.advantages.dropped.length} zero-variance groups dropped, ` +
        `${data.batch.stats.calls - data.batch.stats.trainedCalls} calls excluded`,
    );
  }

  const lossSettings = parseLossConfig(settings.loss, 'offline.loss');
  const temperature = offlineTemperature(settings.temperature, recordedTemperatures(data.batch.samples, new Map(data.trajectories.map((t) => [t.id, t]))));
  const runId = input.runId ?? newId('offline');
  const source = await store.getRun(input.selection.runId);
  const run: Run = {
    id: runId,
    kind: 'train',
    env: source?.env ?? 'proxy',
    envOptions: {},
    policy: model.source,
    config: { offline: true, fromStore: { runId: input.selection.runId, taskIds: input.selection.taskIds ?? [] }, model: model.source, settings, temperature },
    status: 'running',
    createdAt: nowIso(),
    finishedAt: null,
    summary: null,
  };
  await store.createRun(run);
  const runDir = store.runDir(runId);
  const cfg = model.assets.cfg;
  const shapes = new LayoutShapes({ rows: settings.rows, length: settings.rowLength });
  // π_old, the reference and the trained policy are all scored at the calls' temperature.
  const forward = frozenLogprobs(cfg, temperature);
  const loss = rlLoss(cfg, lossSettings, { temperature });
  // LoRA: the optimiser trains the adapters; the loss sees the base with them merged (W + s·B·A).
  const lora = trainedLora(settings.lora, 'offline.lora');
  const frozenBase = lora ? toParams(model.params) : null;
  const trainer = new ParamTrainer<OfflineStepInputs>(
    lora ? initLora(cfg, lora, settings.seed) : toParams(model.params),
    (weights, { base: frozen, ...inputs }) => loss(frozen ? applyLora(cfg, lora!, frozen, weights) : weights, inputs),
    { ...settings.optimizer, lr: settings.lr },
  );
  /** The weights the policy has now: a new reference the caller disposes. */
  const effective = (): Params => (frozenBase ? applyLora(cfg, lora!, tree.ref(frozenBase), tree.ref(trainer.params)) : tree.ref(trainer.params));
  // The KL's reference is the start model (with LoRA, the base: B starts at 0).
  const reference = lossSettings.klBeta > 0 ? (frozenBase ? tree.ref(frozenBase) : toParams(model.params)) : null;
  const history: Record<string, number>[] = [];
  try {
    const base = selectionMetrics(data);
    for (let step = 1; step <= settings.steps; step++) {
      const t0 = performance.now();
      let tooLong = 0;
      // π_old for the whole step: the weights it starts from, kept (one extra reference) while it updates.
      const anchor = effective();
      const updates: { result: StepResult; layout: RlLayout }[] = [];
      try {
        for (const part of miniBatches(data.batch.samples, settings.miniBatches, new Rng(settings.seed, 0x0ff1 + step))) {
          const built = shapes.layouts(part);
          tooLong += built.tooLong;
          for (const layout of built.layouts) {
            const tensors = rlTensors(cfg, layout);
            const inputs: OfflineStepInputs = { ...tensors, oldLogprobs: logprobsOnLayout(forward, anchor, tensors) };
            if (reference) inputs.refLogprobs = logprobsOnLayout(forward, reference, tensors);
            if (frozenBase) inputs.base = tree.ref(frozenBase);
            updates.push({ result: await trainer.step(inputs), layout });
          }
        }
      } finally {
        tree.dispose(anchor);
      }
      const metrics = finiteMetrics({
        ...base,
        ...updateMetrics(updates, data.advantages.stats, data.batch.stats),
        'samples/too_long': tooLong,
        'time/step_s': (performance.now() - t0) / 1000,
      });
      history.push(metrics);
      await store.appendMetrics(Object.entries(metrics).map(([name, value]) => ({ runId, step, name, value })));
      input.onStep?.(step, metrics);
    }
    const trained = await toHostParams(trainer.params);
    const adapter = lora ? { lora, adapters: trained } : null;
    const params = adapter ? mergeLoraHost(cfg, adapter.lora, model.params, adapter.adapters) : trained;
    const state = {
      format: OFFLINE_STATE_FORMAT,
      runId,
      step: settings.steps,
      policyVersion: settings.steps,
      fromStore: run.config.fromStore,
      startModel: model.source,
      config: settings,
      temperature,
      metrics: Object.fromEntries(history.map((m, i) => [String(i + 1), m])),
    };
    const checkpoint = saveTrainCheckpoint(runDir, settings.steps, {
      assets: model.assets,
      params: adapter ? model.params : params,
      adapter: adapter && { ...adapter, baseModelNameOrPath: model.source },
      optimizer: await trainer.optimizer.state(),
      state,
    });
    await store.saveCheckpoint({ runId, step: settings.steps, path: checkpoint, policyVersion: settings.steps, createdAt: nowIso(), metrics: history.at(-1) ?? {} });
    await store.finishRun(runId, {
      status: 'finished',
      finishedAt: nowIso(),
      summary: { steps: settings.steps, checkpoint, samples: data.batch.samples.length, trajectories: data.trajectories.length, skipped: selected.skipped, ...history.at(-1) },
    });
    return { runId, runDir, checkpoint, steps: settings.steps, temperature, data, metrics: history, startParams: model.params, params, adapter };
  } catch (error) {
    await store.finishRun(runId, { status: 'failed', finishedAt: nowIso(), summary: { error: (error as Error).message } });
    throw error;
  } finally {
    trainer.dispose();
    if (reference) tree.dispose(reference);
    if (frozenBase) tree.dispose(frozenBase);
  }
}
