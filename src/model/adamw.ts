/**
 * AdamW (Loshchilov & Hutter; PyTorch's torch.optim.AdamW update) on jax-js primitives, with global
 * gradient-norm clipping and a warmup / cosine learning-rate schedule. The update is a pure traced
 * function (run under jit); the AdamW class owns the moment estimates and their step count.
 */
import { z } from 'zod';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';
import { np, tree, type Tensor } from './engine.ts';
import { toHostParams, toParams, type HostParams, type Params } from './params.ts';

export const adamwConfigSchema = z.object({
  lr: z.number().positive(),
  beta1: z.number().min(0).lt(1).default(0.9),
  beta2: z.number().min(0).lt(1).default(0.999),
  eps: z.number().positive().default(1e-8),
  weightDecay: z.number().min(0).default(0),
  /** Clip gradients to this global L2 norm; null = no clipping. */
  maxGradNorm: z.number().positive().nullable().default(1),
  /** Linear warmup from 0 over this many steps. */
  warmupSteps: z.number().int().min(0).default(0),
  /** After warmup: constant, or cosine decay to minLrRatio * lr at totalSteps. */
  decay: z.enum(['constant', 'cosine']).default('constant'),
  totalSteps: z.number().int().positive().optional(),
  minLrRatio: z.number().min(0).max(1).default(0),
});

export type AdamWConfig = z.infer<typeof adamwConfigSchema>;
export type AdamWOptions = z.input<typeof adamwConfigSchema>;

export function parseAdamWConfig(input: unknown, label = 'optimizer'): AdamWConfig {
  const parsed = adamwConfigSchema.safeParse(input);
  if (!parsed.success) throw new UsageError(describeZodError(parsed.error, label));
  if (parsed.data.decay === 'cosine' && parsed.data.totalSteps === undefined) {
    throw new UsageError(`${label}.totalSteps: required when ${label}.decay is "cosine"`);
  }
  return parsed.data;
}

/** Learning rate for 1-based step t. */
export function learningRate(cfg: AdamWConfig, step: number): number {
  if (cfg.warmupSteps > 0 && step <= cfg.warmupSteps) return (cfg.lr * step) / cfg.warmupSteps;
  if (cfg.decay === 'constant') return cfg.lr;
  const total = cfg.totalSteps!;
  const span = Math.max(1, total - cfg.warmupSteps);
  const progress = Math.min(1, (step - cfg.warmupSteps) / span);
  const min = cfg.minLrRatio * cfg.lr;
  return min + 0.5 * (cfg.lr - min) * (1 + Math.cos(Math.PI * progress));
}

/** Decoupled weight decay applies to matrices only (not norms, biases). */
export function decays(shape: readonly number[]): boolean {
  return shape.length >= 2;
}

/** Per-step scalars, passed as 0-d arrays so a jitted update is compiled once. */
export type StepScalars = {
  lr: Tensor; // learning rate of this step
  bc1: Tensor; // 1 / (1 - beta1^t)
  bc2: Tensor; // 1 / (1 - beta2^t)
};

/** `scheduleStep`: where the learning-rate schedule stands, when it counts something other than updates (an RL trainer's steps). */
export function stepScalars(cfg: AdamWConfig, step: number, scheduleStep = step): StepScalars {
  return {
    lr: np.array(learningRate(cfg, scheduleStep)),
    bc1: np.array(1 / (1 - Math.pow(cfg.beta1, step))),
    bc2: np.array(1 / (1 - Math.pow(cfg.beta2, step))),
  };
}

/** ‖g‖₂ over every gradient (scalar). Borrows grads. */
export function globalNorm(grads: Params): Tensor {
  let total: Tensor | null = null;
  for (const g of Object.values(grads)) {
    const s = np.square(g.ref).sum();
    total = total ? total.add(s) : s;
  }
  return np.sqrt(total ?? np.array(0));
}

/** Scales grads so their global norm is at most maxNorm; returns the pre-clip norm too. Consumes grads. */
export function clipByGlobalNorm(grads: Params, maxNorm: number | null): { grads: Params; norm: Tensor } {
  const norm = globalNorm(grads);
  if (maxNorm === null) return { grads, norm };
  // scale = min(1, maxNorm / (norm + 1e-6))
  const scale = np.minimum(np.reciprocal(norm.ref.add(1e-6)).mul(maxNorm), 1);
  const out: Params = {};
  const names = Object.keys(grads);
  names.forEach((name, i) => (out[name] = grads[name].mul(i === names.length - 1 ? scale : scale.ref)));
  if (names.length === 0) scale.dispose();
  return { grads: out, norm };
}

/**
 * One AdamW step (traceable). Consumes params, grads, m, v and the scalars; returns new ones.
 *   m ← β1 m + (1-β1) g;  v ← β2 v + (1-β2) g²
 *   p ← p − lr·wd·p − lr · (m·bc1) / (√(v·bc2) + ε)
 */
export function adamwUpdate(
  cfg: AdamWConfig,
  params: Params,
  grads: Params,
  m: Params,
  v: Params,
  s: StepScalars,
): { params: Params; m: Params; v: Params } {
  const out = { params: {} as Params, m: {} as Params, v: {} as Params };
  for (const name of Object.keys(params)) {
    const p = params[name];
    const g = grads[name];
    if (!g) throw new Error(`adamw: no gradient for "${name}"`);
    const m1 = m[name].mul(cfg.beta1).add(g.ref.mul(1 - cfg.beta1));
    const v1 = v[name].mul(cfg.beta2).add(np.square(g).mul(1 - cfg.beta2));
    const mHat = m1.ref.mul(s.bc1.ref);
    const vHat = v1.ref.mul(s.bc2.ref);
    const stepDir = mHat.div(np.sqrt(vHat).add(cfg.eps));
    let next = p.ref.sub(stepDir.mul(s.lr.ref));
    if (cfg.weightDecay > 0 && decays(p.shape)) next = next.sub(p.mul(s.lr.ref).mul(cfg.weightDecay));
    else p.dispose();
    out.params[name] = next;
    out.m[name] = m1;
    out.v[name] = v1;
  }
  s.lr.dispose();
  s.bc1.dispose();
  s.bc2.dispose();
  return out;
}

export function zerosLike(params: Params): Params {
  const out: Params = {};
  for (const [name, t] of Object.entries(params)) out[name] = np.zeros(t.shape);
  return out;
}

/** Checkpointable optimiser state (plain data). */
export type AdamWState = { step: number; config: AdamWConfig; m: HostParams; v: HostParams };

/** Owns the first and second moments of every trained tensor and the step count. */
export class AdamW {
  readonly config: AdamWConfig;
  step: number;
  m: Params;
  v: Params;

  /** `shapesFrom` is only read for shapes (not consumed). */
  constructor(config: AdamWOptions | AdamWConfig, shapesFrom: Params, state?: { step: number; m: Params; v: Params }) {
    this.config = parseAdamWConfig(config);
    this.step = state?.step ?? 0;
    this.m = state?.m ?? zerosLike(shapesFrom);
    this.v = state?.v ?? zerosLike(shapesFrom);
  }

  /** Takes the moments out (the caller passes them to a jitted step and gives back the new ones). */
  takeMoments(): { m: Params; v: Params } {
    const out = { m: this.m, v: this.v };
    this.m = {};
    this.v = {};
    return out;
  }

  putMoments(m: Params, v: Params): void {
    this.m = m;
    this.v = v;
  }

  async state(): Promise<AdamWState> {
    return { step: this.step, config: this.config, m: await toHostParams(this.m), v: await toHostParams(this.v) };
  }

  static fromState(state: AdamWState): AdamW {
    const m = toParams(state.m);
    return new AdamW(state.config, m, { step: state.step, m, v: toParams(state.v) });
  }

  dispose(): void {
    tree.dispose(this.m);
    tree.dispose(this.v);
    this.m = {};
    this.v = {};
  }
}
