/**
 * The exact value of an LLM policy on Blackjack: its greedy table. Every visible state is shown to the
 * policy as the agent loop shows an episode's first decision (system prompt with the instructions and
 * tools, the env's observation as the user message; greedyTableStates picks a real deal for each).
 * Hard 21 never comes at a first decision, so it is asked where play meets it: in the conversation of
 * a deal that reaches it, the hits before it written as the agent loop writes them (the assistant's
 * hit call, the env's observation as its tool result). Shown instead as a first message, a hand no
 * deal has (three cards, "You drew ..."), its answer would say nothing about the policy as played. The
 * answer is decoded greedily (temperature 0) and parsed as the agent loop parses it, and an answer that
 * is not a legal move takes the env's invalid-action outcome. The table's exact expected return then
 * follows from the rules (moveTableValue). In a real episode later decisions carry the earlier turns
 * in their context, so sampled greedy play can differ from the table; comparing the two measures that.
 */
import { parseCompletion } from '../agent/parse-tool-calls.ts';
import { assistantMessage, cachedSystemPrompt, observationMessage, systemMessage, toolResultMessage } from '../agent/prompt.ts';
import type { Completion } from '../core/completion.ts';
import type { Message } from '../core/messages.ts';
import type { BlackjackMove } from '../envs/blackjack/actions.ts';
import type { BlackjackOptions } from '../envs/blackjack/options.ts';
import { blackjackSpec } from '../envs/blackjack/spec.ts';
import type { Policy } from '../policy/policy.ts';
import { blackjackTableStates, type BlackjackTableState } from './greedy-table-states.ts';
import { moveTableValue, type TableMove } from './greedy-table-value.ts';

export interface GreedyTableSettings {
  /** Max new tokens per answer (the episodes' own setting, so answers are cut where an episode cuts them). */
  maxTokens: number;
  stop?: string[];
}

export interface GreedyTableEntry {
  key: string;
  seed: number;
  /** Hits before the decision (0: an episode's first decision). */
  hits: number;
  move: TableMove;
  /** Why the answer is not a legal move (null when it is). */
  invalidReason: string | null;
  /** The greedy answer as the policy wrote it. */
  answer: string;
}

export interface GreedyTable {
  /** Exact expected return of the table from the deal (invalid answers end the episode with the env's penalty). */
  exactReturn: number;
  /** Exact outcome probabilities; an invalid ending counts by its penalty's sign (a loss for blackjack). */
  winRate: number;
  drawRate: number;
  lossRate: number;
  /** Share of the table's states whose greedy answer is not a legal move. */
  invalidRate: number;
  /** Probability that an episode played by the table ends on an invalid answer. */
  invalidEndingRate: number;
  states: number;
  invalidStates: number;
  /** The move at each state key (`16/9/hard`), 'invalid' where the answer was not a legal move. */
  moves: Record<string, TableMove>;
  entries: GreedyTableEntry[];
}

/** The conversation at a table state: the deal, then each hit and the observation it brought, as the agent loop writes them. */
export function tableStateMessages(instructions: string, s: BlackjackTableState): Message[] {
  const [deal, ...afterHits] = s.observations;
  const messages = [systemMessage(cachedSystemPrompt(instructions, s.tools)), observationMessage(deal)];
  afterHits.forEach((observation, turn) => {
    const hit = { id: `call_${turn}_0_0`, name: 'hit', arguments: {} }; // the agent loop's id for turn k's first answer
    messages.push(assistantMessage({ content: '', reasoning: null, calls: [hit], error: null }), toolResultMessage(hit, observation));
  });
  return messages;
}

/** An answer at a table state, judged as the agent loop judges it: its move, or why it is not a legal one. */
export function judgeAnswer(completion: Completion, s: BlackjackTableState): { move: TableMove; invalidReason: string | null } {
  const answer = parseCompletion(completion, s.tools);
  if (answer.error) return { move: 'invalid', invalidReason: `${answer.error.kind}: ${answer.error.message}` };
  if (answer.calls.length !== 1) return { move: 'invalid', invalidReason: `multiple_actions: ${answer.calls.length} calls` };
  const [call] = answer.calls;
  const refusal = s.env.validate({ name: call.name, arguments: call.arguments });
  if (refusal !== null) return { move: 'invalid', invalidReason: `illegal_action: ${refusal}` };
  return { move: call.name as BlackjackMove, invalidReason: null };
}

/** The policy's greedy answer at one state, judged as the agent loop judges it. */
async function greedyAnswer(policy: Policy, instructions: string, s: BlackjackTableState, settings: GreedyTableSettings): Promise<GreedyTableEntry> {
  const messages = tableStateMessages(instructions, s);
  const [completion] = await policy.complete({ messages, tools: s.tools, maxTokens: settings.maxTokens, temperature: 0, stop: settings.stop, n: 1, seed: 0 });
  return { key: s.key, seed: s.seed, hits: s.hits, answer: completion.text, ...judgeAnswer(completion, s) };
}

/** The greedy table of `policy` under these rules (all states asked at once, so a batching policy decodes them together). */
export async function blackjackGreedyTable(policy: Policy, options: BlackjackOptions, settings: GreedyTableSettings): Promise<GreedyTable> {
  const states = blackjackTableStates(options);
  const instructions = blackjackSpec.instructions(options);
  const entries = await Promise.all(states.map((s) => greedyAnswer(policy, instructions, s, settings)));
  const moves = Object.fromEntries(entries.map((e) => [e.key, e.move]));
  const penalty = states[0].env.invalidAction.penalty;
  const value = moveTableValue(options, moves, penalty);
  const invalidStates = entries.filter((e) => e.move === 'invalid').length;
  return {
    exactReturn: value.expectedReturn,
    winRate: value.win,
    drawRate: value.draw,
    lossRate: value.loss,
    invalidRate: invalidStates / entries.length,
    invalidEndingRate: value.invalid,
    states: entries.length,
    invalidStates,
    moves,
    entries,
  };
}
