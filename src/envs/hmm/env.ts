/**
 * hmm: a hidden Markov chain with known transition and emission probabilities emits one noisy signal
 * per turn; the agent names the current hidden state and earns 1 when right. The forward-algorithm
 * posterior is the exact expected reward of each guess, and its argmax is the oracle.
 */
import type { ToolSpec } from '../../core/messages.ts';
import { Rng } from '../../core/random.ts';
import type { Action, ActionValue, Env, EnvReset, EnvStep, InvalidActionRule, OracleAdvice, ReportQuestion } from '../env.ts';
import { reportProperties, reportTargets } from '../report-arguments.ts';
import { predict, update } from './forward.ts';
import { drawModel, type HmmModel } from './model.ts';
import type { HmmOptions } from './options.ts';
import { renderEnd, renderTurn } from './render.ts';

/** Independent random streams: drawing the model never shifts the chain's path. */
const MODEL_STREAM = 0;
const CHAIN_STREAM = 1;

export const GUESS_TOOL = 'guess_state';
/** The report question (report option): the probability of each hidden state now. */
export const STATE_QUESTION = 'p_state';

/** Samples the hidden path and its signals for the whole episode. */
export function samplePath(model: HmmModel, length: number, rng: Rng): { states: number[]; signals: number[] } {
  const states: number[] = [];
  const signals: number[] = [];
  for (let t = 0; t < length; t++) {
    const z = rng.categorical(t === 0 ? model.initial : model.transition[states[t - 1]]);
    states.push(z);
    signals.push(rng.categorical(model.emission[z]));
  }
  return { states, signals };
}

const argmax = (xs: readonly number[]): number => xs.reduce((best, x, i) => (x > xs[best] ? i : best), 0);

export class HmmEnv implements Env {
  readonly kind = 'dense' as const;
  readonly invalidAction: InvalidActionRule;
  readonly maxTurns: number;
  private model: HmmModel | null = null;
  private path: { states: number[]; signals: number[] } = { states: [], signals: [] };
  private turn = 0;
  /** p(z_t | everything shown so far). */
  private posterior: number[] = [];
  private correct = 0;
  /** Σ_t max_k posterior_t: what the oracle expects to earn over the turns played. */
  private oracleExpected = 0;

  constructor(private readonly options: HmmOptions) {
    this.maxTurns = options.horizon;
    this.invalidAction = { mode: 'retry', penalty: options.invalidPenalty, maxRetries: options.maxRetries };
  }

  reset(seed: number): EnvReset {
    const o = this.options;
    this.model = drawModel({ states: o.states, symbols: o.symbols, stay: o.stayPercent, clarity: o.clarityPercent, ownSignals: o.ownSignals }, new Rng(seed, MODEL_STREAM));
    this.path = samplePath(this.model, o.horizon, new Rng(seed, CHAIN_STREAM));
    this.turn = 0;
    this.correct = 0;
    this.posterior = update(this.model.initial, this.model.emission, this.path.signals[0]);
    this.oracleExpected = Math.max(...this.posterior);
    const observation = renderTurn({ model: this.model, turn: 0, horizon: o.horizon, signals: this.path.signals.slice(0, 1), revealed: null });
    return { observation, tools: [this.guessTool(this.model)] };
  }

  step(action: Action): EnvStep {
    const model = this.requireTurn();
    const problem = this.validate(action);
    if (problem) throw new Error(`hmm: step called with an illegal action: ${problem}`);
    const guess = model.states.indexOf(action.arguments.state as string);
    const truth = this.path.states[this.turn];
    const questions = this.reportQuestions();
    const targets = questions.length > 0 ? reportTargets(questions, this.oracle()) : null;
    const reward = guess === truth ? 1 : 0;
    const expected = this.posterior[guess];
    this.correct += reward;
    this.turn += 1;
    const revealed = this.options.reveal ? { turn: this.turn - 1, state: truth } : null;
    const done = this.turn >= this.options.horizon;
    const info: Record<string, unknown> = { state: model.states[truth], expectedReward: expected, correct: this.correct };
    if (targets) info.report = { questions, targets, outcomes: { [STATE_QUESTION]: model.states[truth] } };
    if (done) {
      info.oracleReturn = this.oracleExpected;
      return { observation: renderEnd(this.correct, this.options.horizon, revealed ? model.states[truth] : null), reward, done, truncated: false, info };
    }
    // With the state revealed, the next prior is its transition row; otherwise the filter predicts.
    const prior = revealed ? model.transition[truth] : predict(this.posterior, model.transition);
    this.posterior = update(prior, model.emission, this.path.signals[this.turn]);
    this.oracleExpected += Math.max(...this.posterior);
    const observation = renderTurn({ model, turn: this.turn, horizon: this.options.horizon, signals: this.path.signals.slice(0, this.turn + 1), revealed });
    return { observation, reward, done, truncated: false, info };
  }

  validate(action: Action): string | null {
    const names = (this.model?.states ?? []).join(', ');
    if (action.name !== GUESS_TOOL) return `unknown action '${action.name}'; call ${GUESS_TOOL} with a state`;
    const answers = this.options.report ? [STATE_QUESTION] : [];
    const extra = Object.keys(action.arguments).filter((k) => k !== 'state' && !answers.includes(k));
    if (extra.length > 0) return `${GUESS_TOOL} takes only 'state' (got ${extra.join(', ')})`;
    const s = action.arguments.state;
    if (typeof s !== 'string' || !this.model?.states.includes(s)) return `state must be one of ${names} (got ${JSON.stringify(s)})`;
    return null;
  }

  legalActions(): Action[] {
    return (this.model?.states ?? []).map((state) => ({ name: GUESS_TOOL, arguments: { state } }));
  }

  /** The posterior probability of each state: the exact expected reward of naming it. */
  actionRewards(): ActionValue[] {
    this.requireTurn();
    return this.legalActions().map((action, k) => ({ action, expectedReward: this.posterior[k] }));
  }

  oracle(): OracleAdvice {
    const model = this.requireTurn();
    const forecasts: Record<string, number> = {};
    model.states.forEach((name, k) => (forecasts[`p_state_${name}`] = this.posterior[k]));
    return { action: { name: GUESS_TOOL, arguments: { state: model.states[argmax(this.posterior)] } }, forecasts };
  }

  /** With the report option: the posterior over the hidden states (a choice; the oracle's target is the forward posterior). */
  reportQuestions(): ReportQuestion[] {
    if (!this.options.report || !this.model) return [];
    return [{ name: STATE_QUESTION, kind: 'choice', options: this.model.states, text: 'the probability that the chain is in each hidden state now' }];
  }

  state(): Record<string, unknown> {
    const m = this.model;
    return {
      turn: this.turn,
      horizon: this.options.horizon,
      states: m?.states ?? [],
      symbols: m?.symbols ?? [],
      transition: m?.transition ?? [],
      emission: m?.emission ?? [],
      initial: m?.initial ?? [],
      signals: this.path.signals.slice(0, this.turn + 1).map((s) => m?.symbols[s]),
      revealed: this.options.reveal ? this.path.states.slice(0, this.turn).map((s) => m?.states[s]) : [],
      correct: this.correct,
    };
  }

  private guessTool(model: HmmModel): ToolSpec {
    return {
      name: GUESS_TOOL,
      description: 'Name the hidden state the chain is in now.',
      parameters: {
        type: 'object',
        properties: { state: { type: 'string', enum: model.states, description: 'the hidden state' }, ...reportProperties(this.reportQuestions()) },
        required: ['state'],
        additionalProperties: false,
      },
    };
  }

  private requireTurn(): HmmModel {
    if (!this.model) throw new Error('hmm: call reset(seed) before using the env');
    if (this.turn >= this.options.horizon) throw new Error('hmm: the episode is over; call reset(seed)');
    return this.model;
  }
}
