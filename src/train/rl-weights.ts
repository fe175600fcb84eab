/**
 * What RL's optimiser trains (train-config.ts `lora`): every weight, or LoRA adapters over the frozen
 * weights RL started from. Either way the policy samples with, and the checkpoints hand over, the
 * effective weights (the base with the adapters merged); the loss differentiates through the merge
 * with respect to the adapters only.
 */
import type { AdamW, AdamWOptions } from '../model/adamw.ts';
import type { ModelConfig } from '../model/config.ts';
import { tree } from '../model/engine.ts';
import { applyLora, type LoraConfig } from '../model/lora.ts';
import { ParamTrainer, type LossFn } from '../model/param-trainer.ts';
import { toHostParams, type HostParams, type Params } from '../model/params.ts';
import type { RlStepInputs } from './trainer-loss.ts';

export class RlWeights {
  readonly trainer: ParamTrainer<RlStepInputs>;
  readonly #cfg: ModelConfig;
  readonly #lora: { config: LoraConfig; base: Params } | null;
  /**
   * LoRA: the merged weights of the adapters they were merged from (the trainer's params object,
   * replaced by each update), so the policy's update and a step's snapshot share one merge.
   */
  #merged: { adapters: Params; weights: Params } | null = null;

  /**
   * Full weights: `start` is trained. LoRA: `start` is the frozen base and `lora.adapters` are trained.
   * Takes ownership of `start`, the adapters and a given optimizer.
   */
  constructor(cfg: ModelConfig, start: Params, loss: LossFn<RlStepInputs>, optimizer: AdamWOptions | AdamW, lora: { config: LoraConfig; adapters: Params } | null) {
    this.#cfg = cfg;
    this.#lora = lora && { config: lora.config, base: start };
    if (!lora) {
      this.trainer = new ParamTrainer<RlStepInputs>(start, loss, optimizer);
      return;
    }
    const config = lora.config;
    this.trainer = new ParamTrainer<RlStepInputs>(lora.adapters, (adapters, { loraBase, ...inputs }) => {
      if (!loraBase) throw new Error('RlWeights: a LoRA step needs its inputs through withBase');
      return loss(applyLora(cfg, config, loraBase, adapters), inputs);
    }, optimizer);
  }

  /** The policy's weights now: a new reference the caller disposes. */
  effective(): Params {
    const adapters = this.trainer.params;
    if (!this.#lora) return tree.ref(adapters);
    if (this.#merged?.adapters !== adapters) {
      if (this.#merged) tree.dispose(this.#merged.weights);
      this.#merged = { adapters, weights: applyLora(this.#cfg, this.#lora.config, tree.ref(this.#lora.base), tree.ref(adapters)) };
    }
    return tree.ref(this.#merged.weights);
  }

  /** Host copy of the policy's weights now (for checkpoints, the weight average, a reference reset). */
  async effectiveHost(): Promise<HostParams> {
    const params = this.effective();
    try {
      return await toHostParams(params);
    } finally {
      tree.dispose(params);
    }
  }

  /** A layout's inputs with what the loss reads besides them: the frozen base under LoRA. */
  withBase(inputs: RlStepInputs): RlStepInputs {
    return this.#lora ? { ...inputs, loraBase: tree.ref(this.#lora.base) } : inputs;
  }

  /** Host copy of the trained adapters (for a checkpoint); null with full weights. */
  async adapters(): Promise<HostParams | null> {
    return this.#lora ? toHostParams(this.trainer.params) : null;
  }

  dispose(): void {
    if (this.#merged) tree.dispose(this.#merged.weights);
    this.#merged = null;
    this.trainer.dispose();
    if (this.#lora) tree.dispose(this.#lora.base);
  }
}
