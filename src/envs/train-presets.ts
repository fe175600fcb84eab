/**
 * `spindle train` presets of the built-in envs whose episodes are longer than Blackjack's (the
 * train defaults are Blackjack's: 128-token rows, 8 × 32 episodes a step). Measured figures are in
 * each constant's comment.
 */

/**
 * Ten-turn envs (bandit, kelly, hmm, market; newsvendor's five): an episode is 400–800 tokens, so
 * rows are measured from the warm start's demonstrations and a step plays 8 × 4 episodes.
 */
export const multiTurnTrainPreset: Record<string, unknown> = { batchSeeds: 4, update: { rowLength: null } };

/** Nim: 2–6 moves of ~60 tokens an episode; a step plays 8 × 8 episodes. */
export const nimTrainPreset: Record<string, unknown> = { batchSeeds: 8, update: { rowLength: null } };
