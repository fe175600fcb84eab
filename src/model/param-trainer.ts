/**
 * One training step under a single jit: loss and gradients (valueAndGrad), global-norm clipping,
 * AdamW. ParamTrainer owns the trained parameters and the optimiser state, the one place where
 * their arrays are created and released, so memory stays flat over thousands of steps.
 */
import type { JsTree } from '@jax-js/jax';
import { AdamW, adamwUpdate, clipByGlobalNorm, learningRate, stepScalars, type AdamWOptions, type StepScalars } from './adamw.ts';
import { jit, tree, valueAndGrad, type Tensor } from './engine.ts';
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

export class ParamTrainer<I extends JsTree<Tensor>> {
  readonly optimizer: AdamW;
  #params: Params;
  readonly #step: StepFn<I>;

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
    this.#step = jit((params: Params, m: Params, v: Params, s: StepScalars, inputs: I): StepOut => {
      const [[loss, metrics], grads] = lossAndGrad(tree.ref(params), inputs);
      const clipped = clipByGlobalNorm(grads, cfg.maxGradNorm);
      const next = adamwUpdate(cfg, params, clipped.grads, m, v, s);
      return { ...next, loss, gradNorm: clipped.norm, metrics };
    }) as unknown as StepFn<I>;
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
    const opt = this.optimizer;
    opt.step++;
    const { m, v } = opt.takeMoments();
    const at = scheduleStep ?? opt.step;
    const out = this.#step(this.#params, m, v, stepScalars(opt.config, opt.step, at), inputs);
    this.#params = out.params;
    opt.putMoments(out.m, out.v);
    const metrics: Record<string, number> = {};
    for (const [name, t] of Object.entries(out.metrics)) metrics[name] = (await t.data())[0];
    return { loss: (await out.loss.data())[0], gradNorm: (await out.gradNorm.data())[0], learningRate: learningRate(opt.config, at), metrics };
  }

  /** Hands the parameters over (the trainer is unusable afterwards). */
  release(): Params {
    const p = this.#params;
    this.#params = {};
    this.optimizer.dispose();
    return p;
  }

  dispose(): void {
    tree.dispose(this.release());
  }
}
