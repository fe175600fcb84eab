/**
 * The state and action sets of a tabular policy: every state an env can show, keyed by a string
 * read from DecisionView.state(), and a fixed action list. A real LLM reads the observation text;
 * the tabular control (tabular.ts) is allowed to read the state, which is what makes it a control.
 */
import type { Action, DecisionView } from '../envs/env.ts';
import { moveAction } from '../envs/blackjack/actions.ts';
import { allBlackjackDecisions, blackjackStateKey, type BlackjackState } from '../envs/blackjack/solver.ts';

export interface TabularSpace {
  /** Every state key, in table-row order. */
  stateKeys: readonly string[];
  /** The actions, in table-column order; every decision must offer exactly these. */
  actions: readonly Action[];
  /** The state key of a decision. */
  keyOf(view: DecisionView): string;
}

/** Row of a state key; throws when the space does not list it. */
export function stateIndex(space: TabularSpace, rows: ReadonlyMap<string, number>, view: DecisionView): number {
  const key = space.keyOf(view);
  const row = rows.get(key);
  if (row === undefined) throw new Error(`tabular policy: state '${key}' is not in the table`);
  return row;
}

export function rowIndex(space: TabularSpace): Map<string, number> {
  const rows = new Map<string, number>();
  space.stateKeys.forEach((key, i) => {
    if (rows.has(key)) throw new Error(`tabular space: state '${key}' is listed twice`);
    rows.set(key, i);
  });
  return rows;
}

/** Blackjack: 280 visible states (hard 4..21 and soft 12..21 against dealer 1..10) × {stick, hit}. */
export function blackjackSpace(): TabularSpace {
  const keys = new Set<string>();
  for (const d of allBlackjackDecisions()) keys.add(blackjackStateKey(d)); // a natural shows as soft 21
  return {
    stateKeys: [...keys],
    actions: [moveAction('stick'), moveAction('hit')],
    keyOf: (view) => blackjackStateKey(view.state() as unknown as BlackjackState),
  };
}
