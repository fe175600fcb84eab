/**
 * LoRA adapters (Hu et al.), laid out as PEFT saves them so vLLM and PEFT load Spindle's adapters:
 * for each targeted projection W [out, in], A [r, in] and B [out, r] under
 * `base_model.model.model.layers.{i}.{self_attn|mlp}.{name}.lora_A.weight` / `lora_B.weight`,
 * and W' = W + (alpha / r) · B A (alpha / √r with rsLoRA).
 *
 * Without dropout it is applied as a weight transform before the forward: for a batch of N tokens
 * the transform costs r·in·out multiply-adds per target, the in-projection form N·r·(in + out);
 * with N in the thousands the transform is the cheaper one. Dropout acts on each token's input to
 * the adapter, so with dropout (training) the adapters run inside the projections instead.
 */
import { Rng } from '../core/random.ts';
import { UsageError } from '../core/errors.ts';
import type { ModelConfig } from './config.ts';
import { np, random, type Tensor } from './engine.ts';
import type { LayerParams, LoraProjection } from './layers.ts';
import { paramShapes, toParams, type HostParams, type Params } from './params.ts';

export const LORA_TARGETS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type LoraTarget = (typeof LORA_TARGETS)[number];

export type LoraConfig = {
  r: number;
  alpha: number;
  /** PEFT's lora_dropout on each adapter's input (training only; 0 is PEFT's default). */
  dropout: number;
  targetModules: LoraTarget[];
  /** rsLoRA scaling alpha / √r instead of alpha / r. */
  useRslora?: boolean;
};

export function loraScale(lora: LoraConfig): number {
  return lora.useRslora ? lora.alpha / Math.sqrt(lora.r) : lora.alpha / lora.r;
}

export function validateLoraConfig(lora: LoraConfig, label = 'lora'): void {
  if (!Number.isInteger(lora.r) || lora.r <= 0) throw new UsageError(`${label}.r: must be a positive integer, got ${lora.r}`);
  if (!(lora.alpha > 0)) throw new UsageError(`${label}.alpha: must be positive, got ${lora.alpha}`);
  if (!(lora.dropout >= 0 && lora.dropout < 1)) throw new UsageError(`${label}.dropout: must be in [0, 1), got ${lora.dropout}`);
  if (lora.targetModules.length === 0) throw new UsageError(`${label}.targetModules: name at least one of ${LORA_TARGETS.join(', ')}`);
  for (const t of lora.targetModules) {
    if (!(LORA_TARGETS as readonly string[]).includes(t)) throw new UsageError(`${label}.targetModules: "${t}" is not one of ${LORA_TARGETS.join(', ')}`);
  }
}

const PEFT_PREFIX = 'base_model.model.';

/** One adapted projection: the base tensor's HF name and the PEFT names of its A and B. */
export type LoraSite = { layer: number; target: LoraTarget; base: string; a: string; b: string; inFeatures: number; outFeatures: number };

export function loraSites(cfg: ModelConfig, lora: LoraConfig): LoraSite[] {
  const shapes = paramShapes(cfg);
  const sites: LoraSite[] = [];
  for (let i = 0; i < cfg.numLayers; i++) {
    for (const target of lora.targetModules) {
      const block = target === 'gate_proj' || target === 'up_proj' || target === 'down_proj' ? 'mlp' : 'self_attn';
      const module = `model.layers.${i}.${block}.${target}`;
      const [outFeatures, inFeatures] = shapes[`${module}.weight`];
      sites.push({ layer: i, target, base: `${module}.weight`, a: `${PEFT_PREFIX}${module}.lora_A.weight`, b: `${PEFT_PREFIX}${module}.lora_B.weight`, inFeatures, outFeatures });
    }
  }
  return sites;
}

export function loraShapes(cfg: ModelConfig, lora: LoraConfig): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const s of loraSites(cfg, lora)) {
    out[s.a] = [lora.r, s.inFeatures];
    out[s.b] = [s.outFeatures, lora.r];
  }
  return out;
}

/** PEFT's default init: A ~ kaiming-uniform (a = √5), i.e. U(±1/√in); B = 0, so W' = W at step 0. */
export function initLoraHost(cfg: ModelConfig, lora: LoraConfig, seed: number): HostParams {
  validateLoraConfig(lora);
  const rng = new Rng(seed, 0x10ba);
  const out: HostParams = {};
  for (const s of loraSites(cfg, lora)) {
    const bound = 1 / Math.sqrt(s.inFeatures);
    out[s.a] = { shape: [lora.r, s.inFeatures], data: Float32Array.from({ length: lora.r * s.inFeatures }, () => (2 * rng.next() - 1) * bound) };
    out[s.b] = { shape: [s.outFeatures, lora.r], data: new Float32Array(s.outFeatures * lora.r) };
  }
  return out;
}

export function initLora(cfg: ModelConfig, lora: LoraConfig, seed: number): Params {
  return toParams(initLoraHost(cfg, lora, seed));
}

/**
 * The effective weights: base with W + scale · B A at every adapted projection (traceable, so the
 * trainer differentiates through it with respect to the adapters). Consumes base and adapters.
 */
export function applyLora(cfg: ModelConfig, lora: LoraConfig, base: Params, adapters: Params): Params {
  const out: Params = { ...base };
  const scale = loraScale(lora);
  for (const s of loraSites(cfg, lora)) {
    const a = adapters[s.a];
    const b = adapters[s.b];
    if (!a || !b) throw new Error(`applyLora: adapter tensors for ${s.base} are missing (${!a ? s.a : s.b})`);
    out[s.base] = base[s.base].add(np.matmul(b, a).mul(scale));
  }
  return out;
}

/** Merged host weights (for export or serving without adapters); does not touch the engine. */
export function mergeLoraHost(cfg: ModelConfig, lora: LoraConfig, base: HostParams, adapters: HostParams): HostParams {
  const out: HostParams = { ...base };
  const scale = loraScale(lora);
  for (const s of loraSites(cfg, lora)) {
    const w = base[s.base];
    const a = adapters[s.a];
    const b = adapters[s.b];
    if (!w || !a || !b) throw new Error(`mergeLoraHost: ${!w ? s.base : !a ? s.a : s.b} is missing`);
    const merged = Float32Array.from(w.data);
    for (let o = 0; o < s.outFeatures; o++) {
      for (let k = 0; k < lora.r; k++) {
        const bv = scale * b.data[o * lora.r + k];
        if (bv === 0) continue;
        for (let i = 0; i < s.inFeatures; i++) merged[o * s.inFeatures + i] += bv * a.data[k * s.inFeatures + i];
      }
    }
    out[s.base] = { shape: w.shape, data: merged };
  }
  return out;
}

/** Adapters for one forward: the trained tensors, and a PRNG key when dropout should be drawn (training). */
export type LoraRuntime = { config: LoraConfig; adapters: Params; key?: Tensor };

/** True when this forward needs the in-projection form (dropout drawn), false for the weight transform. */
export function loraNeedsInline(runtime: LoraRuntime): boolean {
  return runtime.config.dropout > 0 && runtime.key !== undefined;
}

/**
 * Per-layer LoRA projections for the in-projection form: each site gets its A, B, scale, dropout and
 * its own key split from runtime.key. Consumes runtime.adapters and runtime.key.
 */
export function loraLayerProjections(cfg: ModelConfig, runtime: LoraRuntime): NonNullable<LayerParams['lora']>[] {
  const sites = loraSites(cfg, runtime.config);
  const keys = runtime.key ? random.split(runtime.key, sites.length) : null;
  const perLayer: NonNullable<LayerParams['lora']>[] = Array.from({ length: cfg.numLayers }, () => ({}));
  const scale = loraScale(runtime.config);
  sites.forEach((site, j) => {
    const a = runtime.adapters[site.a];
    const b = runtime.adapters[site.b];
    if (!a || !b) throw new Error(`lora: adapter tensors for ${site.base} are missing (${!a ? site.a : site.b})`);
    const projection: LoraProjection = { a, b, scale, dropout: runtime.config.dropout, key: keys ? keys.ref.slice(j) : undefined };
    perLayer[site.layer][site.target] = projection;
  });
  keys?.dispose();
  return perLayer;
}
