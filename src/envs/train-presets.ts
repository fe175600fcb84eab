/**
 * `spindle train` presets of the built-in envs whose episodes are longer than Blackjack's (the
 * train defaults are Blackjack's: 128-token rows, 4 × 64 episodes a step). They make a run fit:
 * rows long enough for the episodes (measured from the warm start's demonstrations) and fewer
 * episodes a step. They are not yet tuned to train these envs well (see each constant).
 */

/**
 * Ten-turn envs (bandit, kelly, hmm, market; newsvendor's five): an episode is 400–800 tokens, so
 * a step plays 8 × 4 episodes (the bandit: 3 rows of 672 tokens an update).
 */
export const multiTurnTrainPreset: Record<string, unknown> = { groupSize: 8, batchSeeds: 4, update: { rowLength: null } };

/**
 * Nim: 2–6 moves of ~30 tokens an episode, ~300–400 tokens packed; a step plays 8 × 8 episodes
 * in updates of 5 rows × 352 tokens. Measured (heaps=random, starts=winning, opponent=random, one
 * thread, sharing the cores): warm start 450 steps in 793 s, 44 % invalid answers sampled, 9.7 %
 * greedy; 45–75 s an RL step; RL diverged from the warm start in 5 steps (KL 0.004 → 1.0).
 */
export const nimTrainPreset: Record<string, unknown> = { groupSize: 8, batchSeeds: 8, update: { rowLength: null } };
