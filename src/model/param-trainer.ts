/**
 * One training step under a single jit: loss and gradients (valueAndGrad), global-norm clipping,
 * AdamW. ParamTrainer owns the trained parameters and the optimiser state, the one place where
 * their arrays are created and released, so memory stays flat over thousands of steps.
 */
import type { JsTree } from '@jax-js/jax';
import { yieldToEventLoop } from '../core/event-loop.ts';
import { AdamW, adamwUpdate, clipByGlobalNorm, learningRate, stepScalars, zerosLike, type AdamWOptions, type StepScalars } from './adamw.ts';
import { jit, np, tree, valueAndGrad, type Tensor } from './engine.ts';
import type { Params } from './params.ts';

/** Scalar loss, optionally with named scalar metrics computed in the same pass. */
export type LossOutput = Tensor | [Tensor, Record<string, Tensor>];

/**
 * A loss of the trained params and everything else it reads (`inputs`: batch arrays, frozen base
 * weights, ...). It must consume both, like every traced function.
 */
export type LossFn<I> = (params: Params, inputs: I) => LossOutput;

export type StepResult = {
  loss: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
  learningRate: number;
  metrics: Record<string, number>;
};

type StepOut = { params: Params; m: Params; v: Params; loss: Tensor; gradNorm: Tensor; metrics: Record<string, Tensor> };
type StepFn<I> = (params: Params, m: Params, v: Params, s: StepScalars, inputs: I) => StepOut;
type GradFn<I> = (params: Params, pending: Params, inputs: I) => { loss: Tensor; metrics: Record<string, Tensor>; pending: Params };
type ApplyFn = (params: Params, m: Params, v: Params, s: StepScalars, pending: Params, scale: Tensor) => { params: Params; m: Params; v: Params; gradNorm: Tensor };

/** What one optimiser update of accumulated gradients did. */
export type AppliedUpdate = { gradNorm: number; learningRate: number; batches: number };

export class ParamTrainer<I extends JsTree<Tensor>> {
  readonly optimizer: AdamW;
  #params: Params;
  readonly #step: StepFn<I>;
  readonly #grad: GradFn<I>;
  readonly #apply: ApplyFn;
  /** The sum of the gradients accumulated since the last update (accumulate), and how many. */
  #pending: Params | null = null;
  #pendingCount = 0;

  /** Takes ownership of `params` (and of `optimizer` when given, e.g. restored from a checkpoint). */
  constructor(params: Params, lossFn: LossFn<I>, optimizer: AdamWOptions | AdamW) {
    this.#params = params;
    this.optimizer = optimizer instanceof AdamW ? optimizer : new AdamW(optimizer, params);
    const cfg = this.optimizer.config;
    const withAux = (p: Params, inputs: I): [Tensor, Record<string, Tensor>] => {
      const out = lossFn(p, inputs);
      return Array.isArray(out) ? out : [out, {}];
    };
    // valueAndGrad must be jitted as a whole: jit(grad(f)) measured ~35x slower than jit(valueAndGrad(f)).
    const lossAndGrad = valueAndGrad(withAux, { hasAux: true }) as unknown as (
      p: Params,
      inputs: I,
    ) => [[Tensor, Record<string, Tensor>], Params];
    const clipAndUpdate = (params: Params, grads: Params, m: Params, v: Params, s: StepScalars) => {
      const clipped = clipByGlobalNorm(grads, cfg.maxGradNorm);
      return { ...adamwUpdate(cfg, params, clipped.grads, m, v, s), gradNorm: clipped.norm };
    };
    this.#step = jit((params: Params, m: Params, v: Params, s: StepScalars, inputs: I): StepOut => {
      const [[loss, metrics], grads] = lossAndGrad(tree.ref(params), inputs);
      return { ...clipAndUpdate(params, grads, m, v, s), loss, metrics };
    }) as unknown as StepFn<I>;
    this.#grad = jit((params: Params, pending: Params, inputs: I) => {
      const [[loss, metrics], grads] = lossAndGrad(params, inputs);
      const sum: Params = {};
      for (const name of Object.keys(grads)) sum[name] = grads[name].add(pending[name]);
      return { loss, metrics, pending: sum };
    }) as unknown as GradFn<I>;
    this.#apply = jit((params: Params, m: Params, v: Params, s: StepScalars, pending: Params, scale: Tensor) => {
      const mean: Params = {};
      const names = Object.keys(pending);
      names.forEach((name, i) => (mean[name] = pending[name].mul(i === names.length - 1 ? scale : scale.ref)));
      return clipAndUpdate(params, mean, m, v, s);
    }) as unknown as ApplyFn;
  }

  /** The current parameters, borrowed: take `.ref`s (tree.ref) to keep any beyond the next step. */
  get params(): Params {
    return this.#params;
  }

  /**
   * One optimiser step on `inputs` (consumed). `scheduleStep`: the learning-rate schedule's position
   * (default: this update's number), for a caller whose schedule counts its own steps.
   */
  async step(inputs: I, scheduleStep?: number): Promise<StepResult> {
    const { out, learningRate } = this.#update(scheduleStep, (params, m, v, s) => this.#step(params, m, v, s, inputs));
    const result = { loss: await scalar(out.loss), gradNorm: await scalar(out.gradNorm), learningRate, metrics: await scalars(out.metrics) };
    await yieldToEventLoop();
    return result;
  }

  /** Counts the update, runs `run` on the parameters and moments, and keeps what it returns. */
  #update<T extends { params: Params; m: Params; v: Params }>(scheduleStep: number | undefined, run: (params: Params, m: Params, v: Params, s: StepScalars) => T): { out: T; learningRate: number } {
    const opt = this.optimizer;
    opt.step++;
    const { m, v } = opt.takeMoments();
    const at = scheduleStep ?? opt.step;
    const out = run(this.#params, m, v, stepScalars(opt.config, opt.step, at));
    this.#params = out.params;
    opt.putMoments(out.m, out.v);
    return { out, learningRate: learningRate(opt.config, at) };
  }

  /**
   * Adds the gradient of the loss on `inputs` (consumed) to the pending sum without changing the
   * parameters; `applyAccumulated` then makes one optimiser update of their mean (gradient
   * accumulation: many small batches, one step).
   */
  async accumulate(inputs: I): Promise<{ loss: number; metrics: Record<string, number> }> {
    if (this.#pending === null) this.#pending = zerosLike(this.#params);
    const out = this.#grad(tree.ref(this.#params), this.#pending, inputs);
    this.#pending = out.pending;
    this.#pendingCount++;
    const result = { loss: await scalar(out.loss), metrics: await scalars(out.metrics) };
    await yieldToEventLoop();
    return result;
  }

  /** One optimiser step with the mean of the gradients accumulated since the last one (clipped as `step` clips). */
  async applyAccumulated(scheduleStep?: number): Promise<AppliedUpdate> {
    const pending = this.#pending;
    if (pending === null) throw new Error('applyAccumulated: no gradients were accumulated');
    const batches = this.#pendingCount;
    this.#pending = null;
    this.#pendingCount = 0;
    const { out, learningRate } = this.#update(scheduleStep, (params, m, v, s) => this.#apply(params, m, v, s, pending, np.array(1 / batches)));
    return { gradNorm: await scalar(out.gradNorm), learningRate, batches };
  }

  /** Hands the parameters over (the trainer is unusable afterwards). */
  release(): Params {
    if (this.#pending !== null) tree.dispose(this.#pending);
    this.#pending = null;
    const p = this.#params;
    this.#params = {};
    this.optimizer.dispose();
    return p;
  }

  dispose(): void {
    tree.dispose(this.release());
  }
}

async function scalar(t: Tensor): Promise<number> {
  return (await t.data())[0];
}

async function scalars(named: Record<string, Tensor>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, t] of Object.entries(named)) out[name] = await scalar(t);
  return out;
}
