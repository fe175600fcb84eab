/** The hmm env's observations, as short text for an LLM. */
import type { HmmModel } from './model.ts';

const pct = (p: number): string => p.toFixed(2);

/** The model, once, in the first observation. */
export function describeModel(m: HmmModel): string {
  const rows = (matrix: number[][], names: string[]) =>
    matrix.map((r, i) => `  ${m.states[i]}: ${r.map((p, j) => `${names[j]} ${pct(p)}`).join(', ')}`);
  return [
    `Hidden states: ${m.states.join(', ')}. Signals: ${m.symbols.join(', ')}.`,
    'Each turn the hidden state moves by P(next state | state):',
    ...rows(m.transition, m.states),
    'and emits a signal by P(signal | state):',
    ...rows(m.emission, m.symbols),
    `At turn 1 the state is equally likely to be any of ${m.states.join(', ')}.`,
  ].join('\n');
}

export interface HmmTurnView {
  model: HmmModel;
  turn: number;
  horizon: number;
  /** Signals seen so far, turn 1..turn+1. */
  signals: number[];
  /** The state just revealed (reveal option), with its turn. */
  revealed: { turn: number; state: number } | null;
}

export function renderTurn(v: HmmTurnView): string {
  const lines: string[] = [];
  if (v.turn === 0) lines.push(describeModel(v.model));
  if (v.revealed) lines.push(`The state at turn ${v.revealed.turn + 1} was ${v.model.states[v.revealed.state]}.`);
  const seen = v.signals.map((s) => v.model.symbols[s]).join(', ');
  lines.push(`Turn ${v.turn + 1} of ${v.horizon}. Signal: ${v.model.symbols[v.signals[v.turn]]}. Signals so far: ${seen}.`);
  lines.push('Which hidden state is the chain in now?');
  return lines.join('\n');
}

export function renderEnd(correct: number, horizon: number, revealed: string | null): string {
  const lines = revealed ? [`The state at turn ${horizon} was ${revealed}.`] : [];
  lines.push(`All ${horizon} turns done: ${correct} of ${horizon} guesses were right.`);
  return lines.join('\n');
}
