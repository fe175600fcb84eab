/**
 * What `spindle serve` serves: a checkpoint folder, a run's checkpoint (`run:RUN[@STEP]`), the newest
 * checkpoint in the store, or else a freshly initialised default model (with a warning). The engine
 * starts here; the policy batches concurrent requests into the sampler.
 */
import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { UsageError } from '../core/errors.ts';
import { blackjackSpec } from '../envs/blackjack/spec.ts';
import { loadCheckpoint } from '../model/checkpoint.ts';
import { parseModelConfig, type ModelConfig } from '../model/config.ts';
import { initEngine, tree } from '../model/engine.ts';
import { checkpointHostParams } from '../model/export-weights.ts';
import { toParams, type HostParams } from '../model/params.ts';
import type { Tokenizer } from '../model/tokenizer/tokenizer.ts';
import { EmbeddedPolicy, type EmbeddedModel } from '../policy/embedded.ts';
import { findRunCheckpoint, parseRunRef, resolveRunCheckpoint } from '../policy/run-checkpoint.ts';
import { createDefaultModel } from '../train/default-model.ts';
import { openStore } from '../store/open.ts';
import { defaultDbPath } from '../store/paths.ts';

export type ModelSource = { kind: 'dir'; dir: string } | { kind: 'run'; runId: string; db: string | undefined } | { kind: 'fresh' };

export interface ServedModel {
  policy: EmbeddedPolicy;
  cfg: ModelConfig;
  tokenizer: Tokenizer;
  /** The id clients name in `model` (also listed by /v1/models). */
  modelId: string;
  source: ModelSource;
  /** The checkpoint step served (run sources), for reloads. */
  step: number | null;
}

export interface LoadServedOptions {
  /** `DIR`, `run:RUN[@STEP]`, or undefined for the store's newest checkpoint / a fresh model. */
  model?: string;
  db?: string;
  threads?: number;
  warn?: (line: string) => void;
}

function fromHost(cfg: ModelConfig, host: HostParams, model: Omit<EmbeddedModel, 'params' | 'cfg'>): EmbeddedPolicy {
  const params = toParams(host);
  const policy = new EmbeddedPolicy({ ...model, cfg, params });
  tree.dispose(params);
  return policy;
}

function fromDir(dir: string, modelId: string, policyVersion: number): Omit<ServedModel, 'source' | 'step'> {
  const checkpoint = loadCheckpoint(dir);
  const cfg = parseModelConfig(checkpoint.configJson, join(dir, 'config.json'));
  const policy = fromHost(cfg, checkpointHostParams(checkpoint, cfg), {
    tokenizer: checkpoint.tokenizer,
    chatTemplate: checkpoint.chatTemplate,
    stopTokenIds: checkpoint.stopTokenIds,
    name: modelId,
    modelId,
    policyVersion,
  });
  return { policy, cfg, tokenizer: checkpoint.tokenizer, modelId };
}

/** The newest run (by the store's order) that has checkpoints, or null. */
async function newestRunWithCheckpoint(db: string | undefined): Promise<string | null> {
  const path = resolve(db ?? defaultDbPath());
  if (!existsSync(path)) return null;
  const store = await openStore(path);
  try {
    for (const run of await store.listRuns({ limit: 200 })) {
      if ((await store.listCheckpoints(run.id)).length > 0) return run.id;
    }
    return null;
  } finally {
    await store.close();
  }
}

export async function loadServedModel(options: LoadServedOptions): Promise<ServedModel> {
  await initEngine(options.threads === undefined ? {} : { threads: options.threads });
  const spec = options.model;
  if (spec !== undefined && spec.startsWith('run:')) {
    const found = await resolveRunCheckpoint(spec.slice(4), options.db, '--model');
    const modelId = `run:${found.runId}`;
    return { ...fromDir(found.dir, modelId, found.record.policyVersion), source: { kind: 'run', runId: found.runId, db: options.db }, step: found.step };
  }
  if (spec !== undefined) {
    if (!existsSync(spec)) throw new UsageError(`--model ${spec}: no such checkpoint folder`);
    return { ...fromDir(spec, basename(resolve(spec)), 0), source: { kind: 'dir', dir: spec }, step: null };
  }
  const runId = await newestRunWithCheckpoint(options.db);
  if (runId !== null) return loadServedModel({ ...options, model: `run:${runId}` });
  options.warn?.('spindle serve: no checkpoint in the store; serving a freshly initialised default model (random weights)');
  const fresh = await createDefaultModel({ spec: blackjackSpec, options: blackjackSpec.options.parse({}), seed: 0, corpusEpisodes: 50, shape: { vocabSize: 1024 } });
  const { assets } = fresh;
  const policy = fromHost(assets.cfg, fresh.params, {
    tokenizer: assets.tokenizer,
    chatTemplate: assets.chatTemplate,
    stopTokenIds: assets.stopTokenIds,
    name: 'spindle-default',
    modelId: 'spindle-default',
  });
  return { policy, cfg: assets.cfg, tokenizer: assets.tokenizer, modelId: 'spindle-default', source: { kind: 'fresh' }, step: null };
}

/**
 * The run's newest checkpoint when it is newer than `step`: its host params and policy version, for
 * EmbeddedPolicy.updateWeights. Null when there is nothing newer. The architecture must not change.
 */
export async function newerRunCheckpoint(
  source: Extract<ModelSource, { kind: 'run' }>,
  step: number | null,
  cfg: ModelConfig,
): Promise<{ host: HostParams; step: number; policyVersion: number } | null> {
  const store = await openStore(resolve(source.db ?? defaultDbPath()));
  try {
    const found = await findRunCheckpoint(store, parseRunRef(source.runId, '--model'), '--model');
    if (step !== null && found.step <= step) return null;
    const checkpoint = loadCheckpoint(found.dir);
    const newCfg = parseModelConfig(checkpoint.configJson, join(found.dir, 'config.json'));
    if (JSON.stringify(newCfg) !== JSON.stringify(cfg)) throw new UsageError(`run:${source.runId}@${found.step}: the model's architecture changed; restart the server`);
    return { host: checkpointHostParams(checkpoint, cfg), step: found.step, policyVersion: found.record.policyVersion };
  } finally {
    await store.close();
  }
}
