/** One policy call with an optional per-call timeout, enforced even when the policy ignores its signal. */
import type { Completion } from '../core/completion.ts';
import type { Policy, PolicyRequest } from '../policy/policy.ts';
import { untilAborted } from '../core/abortable.ts';

export type PolicyCallResult =
  /** `others`: the completions after the first when the request asked for n > 1. */
  | { kind: 'completion'; completion: Completion; others: Completion[]; latencyMs: number }
  | { kind: 'timeout'; latencyMs: number };

/** Thrown when the policy broke its contract or failed; the episode records it as failed. */
export class PolicyFailure extends Error {}

export async function callPolicy(
  policy: Policy,
  request: PolicyRequest,
  timeoutMs: number | undefined,
  outer: AbortSignal | undefined,
): Promise<PolicyCallResult> {
  const start = performance.now();
  // No timer and no signal unless asked for: this is the hot path of scripted rollouts.
  // A ref'd timer (not AbortSignal.timeout's unref'd one) so a hung policy cannot let the process exit early.
  let timer: NodeJS.Timeout | undefined;
  let timeout: AbortController | undefined;
  if (timeoutMs && timeoutMs > 0) {
    const controller = new AbortController();
    timer = setTimeout(() => controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
    timeout = controller;
  }
  const signal = timeout && outer ? AbortSignal.any([timeout.signal, outer]) : (timeout?.signal ?? outer);
  let completions: Completion[];
  try {
    if (signal) {
      request.signal = signal;
      completions = await untilAborted(policy.complete(request), signal);
    } else {
      completions = await policy.complete(request);
    }
  } catch (error) {
    if (timeout?.signal.aborted) return { kind: 'timeout', latencyMs: performance.now() - start };
    if (outer?.aborted) throw new PolicyFailure('aborted');
    throw new PolicyFailure(`policy '${policy.name}' failed: ${errorText(error)}`);
  } finally {
    clearTimeout(timer);
  }
  const valid = (c: Completion | undefined): c is Completion => !!c && typeof c.text === 'string' && typeof c.finishReason === 'string';
  const [completion, ...others] = Array.isArray(completions) ? completions : [];
  if (!valid(completion)) throw new PolicyFailure(`policy '${policy.name}' returned no completion with a text and a finishReason`);
  const bad = others.findIndex((c) => !valid(c));
  if (bad >= 0) throw new PolicyFailure(`policy '${policy.name}': completion ${bad + 1} of ${completions.length} has no text or finishReason`);
  return { kind: 'completion', completion, others, latencyMs: performance.now() - start };
}


export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
