/**
 * The RL loss of offline training. The tokens were sampled by another process (a server, an older
 * checkpoint), so the PPO ratio is anchored on π_old, the trained weights at the start of the step
 * (computed before the update, no gradient), and each token's policy term is weighted by the
 * truncated importance weight min(π_old / π_sampler, isCap) against the recorded sampling logprobs
 * (loss-rl.ts, loss-importance.ts).
 */
import type { ModelConfig } from '../model/config.ts';
import type { Tensor } from '../model/engine.ts';
import type { Params } from '../model/params.ts';
import type { LossSettings } from './loss-config.ts';
import { policyLoss } from './loss-rl.ts';
import type { LossWithMetrics } from './loss-types.ts';
import { rlLogprobs, type RlTensors } from './rl-batch-forward.ts';

/** A layout's tensors, π_old's logprobs on it, and the reference's when β > 0. */
export type OfflineStepInputs = RlTensors & { oldLogprobs: Tensor; refLogprobs?: Tensor };

export function offlineRlLoss(cfg: ModelConfig, settings: LossSettings) {
  return (params: Params, b: OfflineStepInputs): LossWithMetrics => {
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
