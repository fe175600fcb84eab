/**
 * The model offline training starts from (`--model DIR`, `model:DIR` or `run:RUN[@STEP]`, a LoRA
 * adapter merged in) and the check that the stored ids were made by its tokenizer: a token id means
 * nothing under another vocabulary, so training on ids from a different tokenizer silently teaches
 * noise. The check refuses unless every id is inside the tokenizer's vocabulary and the recorded
 * model id names this model, or the recorded prompts decode, with this tokenizer, to text holding
 * the messages that were sent (the same tokenizer served under another name, e.g. by vLLM).
 */
import { basename, resolve } from 'node:path';
import { UsageError } from '../core/errors.ts';
import type { Trajectory } from '../core/trajectory.ts';
import { loadCheckpoint } from '../model/checkpoint.ts';
import { parseModelConfig } from '../model/config.ts';
import { checkpointHostParams } from '../model/export-weights.ts';
import type { HostParams } from '../model/params.ts';
import { findRunCheckpoint, parseRunRef } from '../policy/run-checkpoint.ts';
import type { Store } from '../store/store.ts';
import { modelAssets, type ModelAssets } from './default-model.ts';

export interface StartModel {
  assets: ModelAssets;
  params: HostParams;
  /** How the model was named (`run:RUN@STEP` or `model:DIR`). */
  source: string;
  /** The ids a server serving it reports (`spindle serve`: `run:RUN`, or the folder's name). */
  modelIds: string[];
}

/** Loads `DIR`, `model:DIR` or `run:RUN[@STEP]` (a run of `store`). */
export async function loadStartModel(spec: string, store: Store, label = '--model'): Promise<StartModel> {
  let dir: string;
  let source: string;
  let modelIds: string[];
  if (spec.startsWith('run:')) {
    const found = await findRunCheckpoint(store, parseRunRef(spec.slice('run:'.length), label), label);
    dir = found.dir;
    source = `run:${found.runId}@${found.step}`;
    modelIds = [`run:${found.runId}`, source, found.runId];
  } else {
    const path = spec.startsWith('model:') ? spec.slice('model:'.length) : spec;
    if (path.trim() === '') throw new UsageError(`${label}: give a checkpoint folder, model:DIR or run:RUN[@STEP]`);
    dir = resolve(path);
    source = `model:${dir}`;
    modelIds = [basename(dir), `model:${path}`, path, dir];
  }
  const checkpoint = loadCheckpoint(dir);
  const cfg = parseModelConfig(checkpoint.configJson, `${dir}/config.json`);
  const assets = modelAssets(cfg, checkpoint.tokenizerJson, checkpoint.tokenizerConfig, dir);
  assets.stopTokenIds = checkpoint.stopTokenIds;
  const nameOrPath = checkpoint.configJson._name_or_path;
  if (typeof nameOrPath === 'string' && nameOrPath !== '') modelIds.push(nameOrPath);
  return { assets, params: checkpointHostParams(checkpoint, cfg), source, modelIds };
}

/** Trajectories whose prompts are decoded in the fallback check. */
const DECODE_CHECKS = 8;

/** The last user or tool message a call sent, trimmed: what its prompt must contain. */
function lastSentText(t: Trajectory): { ids: number[]; text: string } | null {
  for (const turn of t.turns) {
    for (const call of turn.calls) {
      const ids = call.completion.promptTokenIds;
      const sent = [...call.messages].reverse().find((m) => (m.role === 'user' || m.role === 'tool') && m.content.trim() !== '');
      if (ids && sent) return { ids, text: sent.content.trim() };
    }
  }
  return null;
}

/**
 * Throws a UsageError unless the trajectories' ids came from `model`'s tokenizer. `acceptModelIds`:
 * recorded model ids the user vouches for (the same tokenizer served under that name).
 */
export function checkTokenizerFits(trajectories: readonly Trajectory[], model: StartModel, acceptModelIds: readonly string[] = []): void {
  const vocab = model.assets.tokenizer.vocabSize;
  const recorded = new Set<string>();
  for (const t of trajectories) {
    for (const turn of t.turns) {
      for (const { completion: c } of turn.calls) {
        if (c.finishReason === 'error' || c.finishReason === 'timeout') continue;
        recorded.add(c.modelId);
        for (const [field, ids] of [['prompt', c.promptTokenIds], ['completion', c.completionTokenIds]] as const) {
          const bad = ids?.find((id) => id >= vocab);
          if (bad !== undefined) {
            throw new UsageError(
              `trajectory '${t.id}' turn ${turn.index}: ${field} token id ${bad} is outside the vocabulary of ${model.source} (${vocab} tokens); ` +
                `the ids were made by another tokenizer (recorded model '${c.modelId}'): train them with that model`,
            );
          }
        }
      }
    }
  }
  const known = new Set([...model.modelIds, ...acceptModelIds]);
  const unknown = [...recorded].filter((id) => !known.has(id));
  if (unknown.length === 0) return;
  // Another name: accepted when the recorded prompts decode to the messages that were sent.
  const mismatched = trajectories.slice(0, DECODE_CHECKS).flatMap((t) => {
    const sent = lastSentText(t);
    if (!sent) return [];
    return model.assets.tokenizer.decode(sent.ids).includes(sent.text) ? [] : [t.id];
  });
  if (mismatched.length === 0 && trajectories.length > 0) return;
  throw new UsageError(
    `the stored ids were sampled by model ${unknown.map((id) => `'${id}'`).join(', ')}, not ${model.source} (served as '${model.modelIds[0]}')` +
      (mismatched.length > 0 ? `, and the prompts of ${mismatched.map((id) => `'${id}'`).join(', ')} do not decode to the messages sent with its tokenizer` : '') +
      `; train with the model that sampled them, or pass --accept-model ${unknown[0]} if it is the same tokenizer`,
  );
}
