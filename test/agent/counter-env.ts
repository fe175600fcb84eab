/**
 * A small env for the agent-loop tests: reach the target total by adding 1..3 each turn without
 * overshooting. `peek` (informational) tells the target. Knobs make it misbehave on purpose.
 */
import type { ToolSpec } from '../../src/core/messages.ts';
import type { Completion } from '../../src/core/completion.ts';
import type { Action, Env, EnvReset, EnvStep, InvalidActionRule, OracleAdvice } from '../../src/envs/env.ts';
import type { Policy, PolicyRequest } from '../../src/policy/policy.ts';

export const COUNTER_TOOLS: ToolSpec[] = [
  {
    name: 'add',
    description: 'Add n to the total.',
    parameters: { type: 'object', properties: { n: { type: 'integer', minimum: 1, maximum: 3 } }, required: ['n'] },
  },
  { name: 'peek', description: 'Tell the target.', parameters: { type: 'object', properties: {} }, informational: true },
];

export interface CounterKnobs {
  invalidAction?: InvalidActionRule;
  /** Return this from step() instead of a real step. */
  junkStep?: unknown;
  throwIn?: 'reset' | 'step' | 'validate';
  asyncSteps?: boolean;
  withParts?: boolean;
}

export class CounterEnv implements Env {
  readonly kind = 'outcome' as const;
  readonly invalidAction: InvalidActionRule;
  total = 0;
  target = 0;
  constructor(private readonly knobs: CounterKnobs = {}) {
    this.invalidAction = knobs.invalidAction ?? { mode: 'end', penalty: -1, maxRetries: 0 };
  }
  reset(seed: number): EnvReset {
    if (this.knobs.throwIn === 'reset') throw new Error('reset exploded');
    this.total = 0;
    this.target = 4 + (seed % 5);
    return { observation: `Total 0. Reach the target.`, tools: COUNTER_TOOLS };
  }
  validate(action: Action): string | null {
    if (this.knobs.throwIn === 'validate') throw new Error('validate exploded');
    const n = action.arguments.n as number;
    return this.total + n > this.target ? `adding ${n} overshoots` : null;
  }
  step(action: Action): EnvStep | Promise<EnvStep> {
    if (this.knobs.throwIn === 'step') throw new Error('step exploded');
    if (this.knobs.junkStep !== undefined) return this.knobs.junkStep as EnvStep;
    this.total += action.arguments.n as number;
    const done = this.total === this.target;
    const reward = done ? 1 : 0;
    const step: EnvStep = {
      observation: done ? `Total ${this.total}. Target reached.` : `Total ${this.total}.`,
      reward,
      ...(this.knobs.withParts ? { rewardParts: { reach: reward } } : {}),
      done,
      truncated: false,
      info: done ? { outcome: 'win' } : {},
    };
    return this.knobs.asyncSteps ? Promise.resolve(step) : step;
  }
  inform(call: Action): string {
    return call.name === 'peek' ? `The target is ${this.target}.` : 'unknown';
  }
  legalActions(): Action[] {
    const room = this.target - this.total;
    return [1, 2, 3].filter((n) => n <= room).map((n) => ({ name: 'add', arguments: { n } }));
  }
  state(): Record<string, unknown> {
    return { total: this.total, target: this.target };
  }
  oracle(): OracleAdvice {
    return { action: { name: 'add', arguments: { n: Math.min(3, this.target - this.total) } } };
  }
}

export function completion(text: string, extra: Partial<Completion> = {}): Completion {
  return {
    text,
    promptTokenIds: null,
    completionTokenIds: null,
    logprobs: null,
    tokenIdsExact: false,
    finishReason: 'stop',
    modelId: 'test',
    policyVersion: 0,
    ...extra,
  };
}

/** A policy that answers with the given texts (or completions) in order, recording every request. */
export class ScriptPolicy implements Policy {
  readonly requests: PolicyRequest[] = [];
  private next = 0;
  constructor(
    private readonly answers: (string | Completion | ((request: PolicyRequest) => Completion | Promise<Completion>))[],
    readonly name = 'script',
    readonly contextLength: number | null = null,
  ) {}
  async complete(request: PolicyRequest): Promise<Completion[]> {
    this.requests.push(request);
    const answer = this.answers[Math.min(this.next++, this.answers.length - 1)];
    if (typeof answer === 'string') return [completion(answer)];
    if (typeof answer === 'function') return [await answer(request)];
    return [answer];
  }
}

export const add = (n: number) => `<tool_call>{"name": "add", "arguments": {"n": ${n}}}</tool_call>`;
export const peek = '<tool_call>{"name": "peek", "arguments": {}}</tool_call>';
