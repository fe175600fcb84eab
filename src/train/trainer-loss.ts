/**
 * The RL loss of one optimiser step on an RlLayout: new logprobs from the shared-prefix forward,
 * then the clipped policy loss (loss-rl.ts: importance ratio against the recorded sampling
 * logprobs, optional β·KL to the frozen reference, length normalisation, entropy reported).
 */
import type { ModelConfig } from '../model/config.ts';
import { jit, tree, type Tensor } from '../model/engine.ts';
import type { Params } from '../model/params.ts';
import type { LossSettings } from './loss-config.ts';
import { policyLoss } from './loss-rl.ts';
import type { LossWithMetrics } from './loss-types.ts';
import { rlLogprobs, type RlTensors } from './rl-batch-forward.ts';

/**
 * A step's inputs: the layout's tensors, the reference's logprobs when β > 0, and π_old's when the
 * ratio is anchored on weights other than the sampler's (offline training, from-store.ts).
 */
export type RlStepInputs = RlTensors & { refLogprobs?: Tensor; oldLogprobs?: Tensor };

export function rlLoss(cfg: ModelConfig, settings: LossSettings) {
  return (params: Params, b: RlStepInputs): LossWithMetrics => {
    const { logprobs, entropy } = rlLogprobs(cfg, params, b, { entropy: true });
    return policyLoss(
      {
        newLogprobs: logprobs,
        samplingLogprobs: b.samplingLogprobs,
        oldLogprobs: b.oldLogprobs,
        advantages: b.advantages,
        mask: b.mask,
        entropy,
        sequenceLengths: b.sequenceLengths,
        refLogprobs: b.refLogprobs,
      },
      settings,
    );
  };
}

type LayoutInputs = Pick<RlTensors, 'tokens' | 'targets' | 'cos' | 'sin' | 'attnMask' | 'prefix'>;
export type FrozenForward = (params: Params, b: LayoutInputs) => Tensor;

/** Logprobs [B, T] of frozen weights (the reference, π_old) on a layout, jitted, no gradient. */
export function frozenLogprobs(cfg: ModelConfig): FrozenForward {
  return jit((params: Params, b: LayoutInputs) => rlLogprobs(cfg, params, b).logprobs) as unknown as FrozenForward;
}

/** `forward` of `params` on a layout's tensors, both borrowed (references taken). */
export function logprobsOnLayout(forward: FrozenForward, params: Params, t: RlTensors): Tensor {
  return forward(tree.ref(params), {
    tokens: t.tokens.ref,
    targets: t.targets.ref,
    cos: t.cos.ref,
    sin: t.sin.ref,
    attnMask: t.attnMask.ref,
    // jit's tree flattening rejects an undefined leaf: a layout without a shared prefix leaves the key out.
    ...(t.prefix ? { prefix: tree.ref(t.prefix) } : {}),
  });
}
