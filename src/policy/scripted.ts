/**
 * Scripted baselines. They answer through the same Policy contract as an LLM, with a real
 * `<tool_call>` text, so the whole agent loop (parsing included) runs; each also gives its exact
 * action distribution for exact evaluators.
 */
import type { Completion } from '../core/completion.ts';
import { Rng } from '../core/random.ts';
import type { Action, ActionDistribution, DecisionView, EnvBaseline } from '../envs/env.ts';
import type { Policy, PolicyRequest } from './policy.ts';
import { oracleReportAnswers, randomReportAnswers, withReportAnswers } from './report-answers.ts';

interface ScriptedRule {
  name: string;
  /** Whether `choose` draws from `rng` (seeded from the request's seed); deterministic rules skip making one. */
  random?: boolean;
  choose(view: DecisionView, rng: Rng | null): Action;
  distribution(view: DecisionView): ActionDistribution;
}

/** The text a model would write to take `action`. */
export function toolCallText(action: Action): string {
  return `<tool_call>${JSON.stringify({ name: action.name, arguments: action.arguments })}</tool_call>`;
}

function scriptedCompletion(text: string, modelId: string): Completion {
  return {
    text,
    promptTokenIds: null,
    completionTokenIds: null,
    logprobs: null,
    tokenIdsExact: false,
    finishReason: 'stop',
    modelId,
    policyVersion: 0,
  };
}

function scriptedPolicy(rule: ScriptedRule): Policy {
  return {
    name: rule.name,
    contextLength: null,
    complete(request: PolicyRequest): Promise<Completion[]> {
      const view = request.view;
      if (!view) {
        return Promise.reject(new Error(`policy '${rule.name}' is scripted: it needs the decision view (request.view)`));
      }
      try {
        const rng = rule.random ? new Rng(request.seed ?? 0) : null;
        const n = request.n ?? 1;
        const out: Completion[] = [];
        for (let i = 0; i < n; i++) out.push(scriptedCompletion(toolCallText(rule.choose(view, rng)), rule.name));
        return Promise.resolve(out);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    distribution: (view) => rule.distribution(view),
  };
}

function legalActions(view: DecisionView, policy: string): Action[] {
  const actions = view.legalActions();
  if (actions.length === 0) throw new Error(`policy '${policy}': the env lists no legal actions at this decision`);
  return actions;
}

/** Uniform over the legal actions; report questions (if any) get uniformly random forecasts. */
export function randomPolicy(): Policy {
  return scriptedPolicy({
    name: 'random',
    random: true,
    choose: (view, rng) => {
      const actions = legalActions(view, 'random');
      const action = actions[rng!.int(actions.length)];
      return withReportAnswers(action, randomReportAnswers(view, rng!));
    },
    distribution: (view) => {
      const actions = legalActions(view, 'random');
      return actions.map((action) => ({ action, p: 1 / actions.length }));
    },
  });
}

/** The env's optimal action (DecisionView.oracle); report questions (if any) get the oracle's targets. */
export function oraclePolicy(): Policy {
  const advice = (view: DecisionView): Action => {
    if (typeof view.oracle !== 'function') throw new Error("policy 'oracle': this env has no oracle");
    return view.oracle().action;
  };
  return scriptedPolicy({
    name: 'oracle',
    choose: (view) => withReportAnswers(advice(view), oracleReportAnswers(view)),
    distribution: (view) => [{ action: advice(view), p: 1 }],
  });
}

/** The legal blackjack move `move` (a tool named so, or an argument with that value). */
function blackjackMove(view: DecisionView, move: 'stick' | 'hit', policy: string): Action {
  for (const action of legalActions(view, policy)) {
    if (action.name === move) return action;
    for (const key in action.arguments) if (action.arguments[key] === move) return action;
  }
  throw new Error(`policy '${policy}' plays blackjack: no legal '${move}' action here`);
}

/** Blackjack: stick once the player's sum reaches `threshold`, otherwise hit. */
export function stickAtPolicy(threshold: number): Policy {
  const name = `stick-at-${threshold}`;
  const move = (view: DecisionView): Action => {
    const sum = view.state().playerSum;
    if (typeof sum !== 'number') throw new Error(`policy '${name}' plays blackjack: the state has no numeric playerSum`);
    return blackjackMove(view, sum >= threshold ? 'stick' : 'hit', name);
  };
  return scriptedPolicy({ name, choose: (view) => move(view), distribution: (view) => [{ action: move(view), p: 1 }] });
}

/** Blackjack: stick on the first decision. */
export function alwaysStickPolicy(): Policy {
  const move = (view: DecisionView) => blackjackMove(view, 'stick', 'always-stick');
  return scriptedPolicy({ name: 'always-stick', choose: move, distribution: (view) => [{ action: move(view), p: 1 }] });
}

/**
 * An env's own baseline rule (EnvSpec.baselines) under its name; report questions (if any) get
 * uniformly random forecasts, as `random` gives them: the rule is about the action.
 */
export function envBaselinePolicy(name: string, baseline: EnvBaseline): Policy {
  return scriptedPolicy({
    name,
    random: true,
    choose: (view, rng) => withReportAnswers(baseline.choose(view), randomReportAnswers(view, rng!)),
    distribution: (view) => [{ action: baseline.choose(view), p: 1 }],
  });
}
