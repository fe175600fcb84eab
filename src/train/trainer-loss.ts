/**
 * The RL loss of one optimiser step on an RlLayout: new logprobs from the shared-prefix forward,
 * then the clipped policy loss (loss-rl.ts: importance ratio against the recorded sampling
 * logprobs, optional β·KL to the frozen reference, length normalisation, entropy reported).
 */
import type { ModelConfig } from '../model/config.ts';
import { jit, type Tensor } from '../model/engine.ts';
import type { Params } from '../model/params.ts';
import type { LossSettings } from './loss-config.ts';
import { policyLoss } from './loss-rl.ts';
import type { LossWithMetrics } from './loss-types.ts';
import { rlLogprobs, type RlTensors } from './rl-batch-forward.ts';

/** A step's inputs: the layout's tensors, plus the reference's logprobs when β > 0. */
export type RlStepInputs = RlTensors & { refLogprobs?: Tensor };

export function rlLoss(cfg: ModelConfig, settings: LossSettings) {
  return (params: Params, b: RlStepInputs): LossWithMetrics => {
    const { logprobs, entropy } = rlLogprobs(cfg, params, b, { entropy: true });
    return policyLoss(
      {
        newLogprobs: logprobs,
        samplingLogprobs: b.samplingLogprobs,
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

type RefForward = (params: Params, b: Pick<RlTensors, 'tokens' | 'targets' | 'cos' | 'sin' | 'attnMask' | 'prefix'>) => Tensor;

/** The frozen reference's logprobs [B, T] on a layout (jitted; borrows nothing: pass refs). */
export function referenceLogprobs(cfg: ModelConfig): RefForward {
  return jit((params: Params, b: Pick<RlTensors, 'tokens' | 'targets' | 'cos' | 'sin' | 'attnMask' | 'prefix'>) => rlLogprobs(cfg, params, b).logprobs) as unknown as RefForward;
}
