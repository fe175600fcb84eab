/**
 * A tabular softmax policy: one row of logits per state, π(a | s) = softmax(logits[s])_a. It is the
 * control that separates the RL algorithm from the transformer: it answers through the Policy
 * contract with real tool-call text, and its "tokens" are the table's indices, so the trainer
 * reads what was sampled exactly as it does for an LLM (DESIGN rule 1):
 *
 *   promptTokenIds = [state row], completionTokenIds = [action column],
 *   logprobs = [log π_sampling(a | s)] (after temperature), modelLogprobs = [log softmax(logits[s])_a]
 *
 * It holds real state (the table and its version), hence a class.
 */
import type { Completion } from '../core/completion.ts';
import { Rng } from '../core/random.ts';
import type { ActionDistribution, DecisionView } from '../envs/env.ts';
import type { Policy, PolicyRequest } from '../policy/policy.ts';
import { toolCallText } from '../policy/scripted.ts';
import { rowIndex, stateIndex, type TabularSpace } from './tabular-space.ts';

/** log softmax of logits / temperature, in float64. */
export function logSoftmax(logits: ArrayLike<number>, temperature = 1): number[] {
  const z = Array.from(logits, (x) => x / temperature);
  const max = Math.max(...z);
  const lse = max + Math.log(z.reduce((acc, x) => acc + Math.exp(x - max), 0));
  return z.map((x) => x - lse);
}

export class TabularPolicy implements Policy {
  readonly name: string;
  readonly contextLength = null;
  readonly space: TabularSpace;
  readonly #rows: Map<string, number>;
  #logits: Float32Array;
  #version = 0;

  /** `logits` [states × actions], row-major; zeros (uniform) by default. */
  constructor(space: TabularSpace, options: { name?: string; logits?: Float32Array } = {}) {
    this.space = space;
    this.name = options.name ?? 'tabular';
    this.#rows = rowIndex(space);
    this.#logits = new Float32Array(space.stateKeys.length * space.actions.length);
    if (options.logits) this.setLogits(options.logits, 0);
  }

  get version(): number {
    return this.#version;
  }

  /** A copy of the table. */
  logits(): Float32Array {
    return Float32Array.from(this.#logits);
  }

  /** Loads a new table (e.g. after a training step) under a policy version. */
  setLogits(logits: ArrayLike<number>, version: number): void {
    if (logits.length !== this.#logits.length) {
      throw new Error(`tabular policy: expected ${this.#logits.length} logits (states × actions), got ${logits.length}`);
    }
    for (let i = 0; i < logits.length; i++) {
      if (!Number.isFinite(logits[i])) throw new Error(`tabular policy: logit ${i} is ${logits[i]}`);
    }
    this.#logits.set(logits);
    this.#version = version;
  }

  /** The table row of a decision. */
  row(view: DecisionView): number {
    this.checkActions(view);
    return stateIndex(this.space, this.#rows, view);
  }

  /** log π(· | s) at temperature τ (τ = 1: the policy itself). */
  logprobs(row: number, temperature = 1): number[] {
    const k = this.space.actions.length;
    return logSoftmax(this.#logits.subarray(row * k, (row + 1) * k), temperature);
  }

  /** The greedy action column at a row (the first on ties). */
  greedy(row: number): number {
    const lp = this.logprobs(row);
    return lp.indexOf(Math.max(...lp));
  }

  distribution(view: DecisionView): ActionDistribution {
    const lp = this.logprobs(this.row(view));
    return this.space.actions.map((action, a) => ({ action, p: Math.exp(lp[a]) }));
  }

  /** The deterministic rule that plays the greedy action (exact evaluation of the greedy table). */
  greedyDistribution(view: DecisionView): ActionDistribution {
    return [{ action: this.space.actions[this.greedy(this.row(view))], p: 1 }];
  }

  complete(request: PolicyRequest): Promise<Completion[]> {
    try {
      return Promise.resolve(this.sample(request));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private sample(request: PolicyRequest): Completion[] {
    const view = request.view;
    if (!view) throw new Error(`policy '${this.name}' is tabular: it needs the decision view (request.view)`);
    const row = this.row(view);
    const model = this.logprobs(row);
    const tau = request.temperature;
    // τ = 0: greedy, which samples its action with probability 1.
    const sampling = tau > 0 ? this.logprobs(row, tau) : model.map((_, a) => (a === this.greedy(row) ? 0 : -Infinity));
    const rng = new Rng(request.seed ?? 0);
    const probs = sampling.map(Math.exp);
    const out: Completion[] = [];
    for (let i = 0; i < (request.n ?? 1); i++) {
      const a = rng.categorical(probs);
      out.push({
        text: toolCallText(this.space.actions[a]),
        promptTokenIds: [row],
        completionTokenIds: [a],
        logprobs: [sampling[a]],
        modelLogprobs: [model[a]],
        tokenIdsExact: true,
        finishReason: 'stop',
        modelId: this.name,
        policyVersion: this.#version,
      });
    }
    return out;
  }

  private checkActions(view: DecisionView): void {
    const legal = view.legalActions();
    const names = this.space.actions.map((a) => a.name);
    if (legal.length !== names.length || legal.some((a, i) => a.name !== names[i])) {
      throw new Error(
        `tabular policy: the decision offers [${legal.map((a) => a.name).join(', ')}], the table has [${names.join(', ')}]`,
      );
    }
  }
}
