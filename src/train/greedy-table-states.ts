/**
 * One real decision for every visible Blackjack state (player sum, dealer card, usable ace): the deal of
 * the first seed (0, 1, 2, ...) whose first decision is that state, reset through the env itself so
 * the observation is exactly what an episode shows. Hard 21 never starts an episode (two cards make at
 * most 20 hard), so its decisions come from a seed that reaches it by hitting, and keep the whole way
 * there: the deal's observation and the observation after each hit. The way is the one play takes
 * most often: a hard 11 dealt, one hit, a ten drawn (every policy worth evaluating hits a hard 11);
 * only where no seed has one, the first that gets there hitting on. (The first seed to get there hitting on, taken before,
 * reached hard 21 against a 2 by hitting on soft 18, 19 and 21: a conversation no sensible policy
 * has, whose answer said nothing about the policy; a trained one answered it invalidly, costing its
 * table 0.008 of exact return while it stuck on every other 21.)
 */
import type { EnvReset } from '../envs/env.ts';
import { BlackjackEnv } from '../envs/blackjack/env.ts';
import type { BlackjackOptions } from '../envs/blackjack/options.ts';
import { blackjackStateKey, type BlackjackState } from '../envs/blackjack/solver.ts';

export interface BlackjackTableState {
  /** `16/9/hard`, as blackjackStateKey writes it. */
  key: string;
  state: BlackjackState;
  /** The episode seed whose deal shows this state. */
  seed: number;
  /** Hits taken before this decision (0: the episode's first decision). */
  hits: number;
  /** The env's observation at this decision. */
  observation: string;
  /** The deal's observation, then the one after each hit (the last is `observation`); one entry when hits is 0. */
  observations: string[];
  tools: EnvReset['tools'];
  /** The env, left at this decision (to check an answer with env.validate). */
  env: BlackjackEnv;
}

/** Every visible state a decision can have: hard 4..21 and soft 12..21 against dealer cards 1..10. */
export function blackjackStateKeys(): string[] {
  const keys: string[] = [];
  for (let dealerCard = 1; dealerCard <= 10; dealerCard++) {
    for (let playerSum = 4; playerSum <= 21; playerSum++) keys.push(blackjackStateKey({ playerSum, dealerCard, usableAce: false }));
    for (let playerSum = 12; playerSum <= 21; playerSum++) keys.push(blackjackStateKey({ playerSum, dealerCard, usableAce: true }));
  }
  return keys;
}

/** Seeds tried before giving up; every state turns up within the first ~10,000. */
const MAX_SEEDS = 1_000_000;
/** Seeds searched for a hard 11 drawing a ten (about 1 deal in 900 against a given dealer card). */
const ONE_HIT_SEEDS = 100_000;

function stateOf(env: BlackjackEnv): BlackjackState {
  const s = env.state();
  return { playerSum: s.playerSum, dealerCard: s.dealerCard, usableAce: s.usableAce };
}

/** The decisions of the table, in blackjackStateKeys() order. */
export function blackjackTableStates(options: BlackjackOptions): BlackjackTableState[] {
  const wanted = new Set(blackjackStateKeys());
  const found = new Map<string, BlackjackTableState>();
  const take = (env: BlackjackEnv, seed: number, observations: string[], tools: EnvReset['tools']): boolean => {
    const state = stateOf(env);
    const key = blackjackStateKey(state);
    if (!wanted.has(key) || found.has(key)) return false;
    found.set(key, { key, state, seed, hits: observations.length - 1, observation: observations[observations.length - 1], observations, tools, env });
    return true;
  };
  // First decisions of episodes: every state but hard 21.
  const dealt = [...wanted].filter((key) => !/^21\/\d+\/hard$/.test(key)).length;
  let env = new BlackjackEnv(options);
  for (let seed = 0; seed < MAX_SEEDS && found.size < dealt; seed++) {
    const reset = env.reset(seed);
    if (take(env, seed, [reset.observation], reset.tools)) env = new BlackjackEnv(options);
  }
  // States no deal shows (hard 21): first by one hit from a hard 11, ...
  for (let seed = 0; seed < ONE_HIT_SEEDS && found.size < wanted.size; seed++) {
    const reset = env.reset(seed);
    const dealt = env.state();
    if (dealt.usableAce || dealt.playerSum !== 11) continue;
    const step = env.step({ name: 'hit', arguments: {} });
    if (!step.done && take(env, seed, [reset.observation, step.observation], reset.tools)) env = new BlackjackEnv(options);
  }
  // ... else hitting on from each deal until the hand is over.
  for (let seed = 0; seed < MAX_SEEDS && found.size < wanted.size; seed++) {
    const reset = env.reset(seed);
    const observations = [reset.observation];
    for (;;) {
      const step = env.step({ name: 'hit', arguments: {} });
      if (step.done) break;
      observations.push(step.observation);
      if (take(env, seed, [...observations], reset.tools)) {
        env = new BlackjackEnv(options);
        break;
      }
    }
  }
  const missing = [...wanted].filter((key) => !found.has(key));
  if (missing.length > 0) throw new Error(`blackjack greedy table: no seed below ${MAX_SEEDS} reaches ${missing.join(', ')}`);
  return blackjackStateKeys().map((key) => found.get(key)!);
}
