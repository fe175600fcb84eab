/**
 * The RL loss of one optimiser step on an RlLayout: new logprobs from the shared-prefix forward,
 * then the clipped policy loss (loss-rl.ts: importance ratio against the recorded sampling
 * logprobs, optional β·KL to the frozen reference, length normalisation, entropy reported). When
 * the layout holds supervised targets (sftMask: the oracle's report answers, report-sft-samples.ts),
 * the same forward also gives their loss (loss-sft.ts), added with its weight:
 *
 *   loss = RL loss + sftWeight · (−Σ_t s_t · log π(t) / Σ_t s_t)
 */
import type { ModelConfig } from '../model/config.ts';
import { jit, lax, np, tree, type Tensor } from '../model/engine.ts';
import type { Params } from '../model/params.ts';
import type { LossSettings } from './loss-config.ts';
import { policyLoss } from './loss-rl.ts';
import { supervisedLoss } from './loss-sft.ts';
import type { LossWithMetrics } from './loss-types.ts';
import type { RlLayout } from './rl-batch.ts';
import { rlLogprobs, rlTensors, type RlTensors } from './rl-batch-forward.ts';

/**
 * A step's inputs: the layout's tensors, the reference's logprobs when β > 0 (and β itself under a
 * schedule), and π_old's when the ratio is anchored on weights other than the sampler's (offline
 * training, from-store.ts).
 */
export type RlStepInputs = RlTensors & {
  refLogprobs?: Tensor;
  oldLogprobs?: Tensor;
  klBeta?: Tensor;
  /** The frozen base the trained LoRA adapters are merged into (rl-weights.ts). */
  loraBase?: Params;
};

export interface RlLossOptions {
  /** Weight of the supervised term (default 1); read only for layouts with supervised targets. */
  sftWeight?: number;
  /**
   * The rollouts' sampling temperature (default 1): the loss (its supervised term too) scores
   * softmax(logits / T), the policy that sampled them, as TRL and verl do. Scored at T = 1 instead,
   * a rollout at T ≠ 1 would start its ratio away from 1, and the clip would cut the gradient of
   * rare sampled tokens: at T 1.5 a dense bandit run could not train its refused answers down
   * (docs/results.md, "Bandit").
   */
  temperature?: number;
}

/**
 * Metrics: policyLoss's, plus, on a layout with supervised targets, sftLoss (the unweighted mean
 * NLL of those targets) and sftTokens (their count).
 */
export function rlLoss(cfg: ModelConfig, settings: LossSettings, options: RlLossOptions = {}) {
  const { sftWeight = 1, temperature = 1 } = options;
  if (!(Number.isFinite(sftWeight) && sftWeight >= 0)) throw new Error(`rlLoss: sftWeight must be a finite number ≥ 0, got ${sftWeight}`);
  return (params: Params, b: RlStepInputs): LossWithMetrics => {
    const { logprobs, entropy } = rlLogprobs(cfg, params, b, { entropy: true, temperature });
    const sft = b.sftMask ? supervisedLoss(logprobs.ref, b.sftMask) : null;
    const [loss, metrics] = policyLoss(
      {
        newLogprobs: logprobs,
        samplingLogprobs: b.samplingLogprobs,
        oldLogprobs: b.oldLogprobs,
        advantages: b.advantages,
        mask: b.mask,
        entropy,
        sequenceLengths: b.sequenceLengths,
        tokenWeights: b.tokenWeights,
        explored: b.explored,
        refLogprobs: b.refLogprobs,
        klBeta: b.klBeta,
      },
      settings,
    );
    if (!sft) return [loss, metrics];
    const [sftLoss, { tokens }] = sft;
    metrics.sftLoss = lax.stopGradient(sftLoss.ref);
    metrics.sftTokens = tokens;
    return [loss.add(sftLoss.mul(sftWeight)), metrics];
  };
}

type LayoutInputs = Pick<RlTensors, 'tokens' | 'targetIndex' | 'targets' | 'cos' | 'sin' | 'attnMask' | 'prefix'>;
export type FrozenForward = (params: Params, b: LayoutInputs) => Tensor;

/**
 * Logprobs [1, K] (the layout's target slots) of frozen weights (the reference, π_old) on a layout,
 * at the given temperature (default 1; the reference at the loss's), jitted, no gradient. The
 * merged heads are materialised (decoderLayer's materializeHeads: it cuts this forward's time ~3×).
 */
export function frozenLogprobs(cfg: ModelConfig, temperature = 1): FrozenForward {
  return jit((params: Params, b: LayoutInputs) => rlLogprobs(cfg, params, b, { materializeHeads: true, temperature }).logprobs) as unknown as FrozenForward;
}

/** `forward` of `params` on a layout's tensors, both borrowed (references taken). */
/** The frozen KL reference of an RL run: its weights and their jitted forward (frozenLogprobs). */
export type KlReference = { params: Params; forward: FrozenForward };

/** A layout's step inputs: its tensors and, with a KL reference, the reference's logprobs and β. */
export function rlLayoutInputs(cfg: ModelConfig, layout: RlLayout, reference: KlReference | null, klBeta: number): RlStepInputs {
  const inputs: RlStepInputs = rlTensors(cfg, layout);
  if (reference) {
    inputs.refLogprobs = logprobsOnLayout(reference.forward, reference.params, inputs);
    inputs.klBeta = np.array(klBeta);
  }
  return inputs;
}

export function logprobsOnLayout(forward: FrozenForward, params: Params, t: RlTensors): Tensor {
  return forward(tree.ref(params), {
    tokens: t.tokens.ref,
    targetIndex: t.targetIndex.ref,
    targets: t.targets.ref,
    cos: t.cos.ref,
    sin: t.sin.ref,
    attnMask: t.attnMask.ref,
    // jit's tree flattening rejects an undefined leaf: a layout without a shared prefix leaves the key out.
    ...(t.prefix ? { prefix: tree.ref(t.prefix) } : {}),
  });
}
