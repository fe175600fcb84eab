/**
 * The tabular control (issue 4): a softmax table over Blackjack's 280 states trained with the same
 * rollouts, GRPO advantages, clipped policy loss and AdamW as the LLM, on the outcome reward only.
 * Reports, per seed, the episodes it needed before the exact expected return (the solver's, every
 * --eval-every episodes) came within --gap of the optimum −0.0466, for the stochastic policy itself
 * and for its greedy table, and the wall time.
 * usage: npm run bench -- tabular-blackjack [--json] [--seeds 3] [--episodes 400000] [--eval-every 5000]
 *        [--gap 0.02] [--config '{"groupSize":8,"optimizer":{"lr":0.1}}']
 */
import { blackjackSpec } from '../src/envs/blackjack/spec.ts';
import { initEngine } from '../src/model/engine.ts';
import { blackjackSpace } from '../src/train/tabular-space.ts';
import { episodesToReach, trainTabular, type TabularTrainConfig } from '../src/train/tabular-train.ts';
import { flag } from './flags.ts';
import type { BenchFigures } from './run.ts';

function positiveNumber(text: string, name: string, integer: boolean): number {
  const v = Number(text);
  if (!Number.isFinite(v) || v <= 0 || (integer && !Number.isSafeInteger(v))) {
    throw new Error(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got ${text}`);
  }
  return v;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function run(args: string[], log: (line: string) => void): Promise<BenchFigures> {
  const seeds = positiveNumber(flag(args, 'seeds', '3'), 'seeds', true);
  const maxEpisodes = positiveNumber(flag(args, 'episodes', '400000'), 'episodes', true);
  const evalEvery = positiveNumber(flag(args, 'eval-every', '5000'), 'eval-every', true);
  const gap = positiveNumber(flag(args, 'gap', '0.02'), 'gap', false);
  const overrides = JSON.parse(flag(args, 'config', '{}')) as TabularTrainConfig;
  const { threads } = await initEngine({ threads: 1 }); // [B, 280] tensors: worker hand-offs cost more than they save
  const options = blackjackSpec.options.parse({});
  const space = blackjackSpace();

  const figures: BenchFigures = { seeds, maxEpisodes, evalEvery, gap, threads, config: JSON.stringify(overrides) };
  const reach: { stochastic: number[]; greedy: number[] } = { stochastic: [], greedy: [] };
  let allReached = true;
  let wallMs = 0;
  for (let seed = 0; seed < seeds; seed++) {
    const r = await trainTabular(blackjackSpec, options, space, { ...overrides, seed, maxEpisodes, evalEvery, stopWithin: gap });
    const stochastic = episodesToReach(r, 'stochasticReturn', gap);
    const greedy = episodesToReach(r, 'greedyReturn', gap);
    const last = r.history[r.history.length - 1];
    if (seed === 0) figures.optimalReturn = r.optimalReturn;
    wallMs += r.wallMs;
    log(
      `seed ${seed}: within ${gap} of the optimum ${r.optimalReturn.toFixed(4)} after ` +
        `${stochastic ?? `> ${r.episodes}`} episodes (stochastic policy), ${greedy ?? `> ${r.episodes}`} (greedy table); ` +
        `at the end (${r.episodes} episodes, ${r.steps} steps): stochastic ${last.stochasticReturn.toFixed(4)}, ` +
        `greedy ${last.greedyReturn.toFixed(4)}; ${(r.wallMs / 1000).toFixed(1)} s ` +
        `(rollouts ${(r.rolloutMs / 1000).toFixed(1)} s, training ${(r.trainMs / 1000).toFixed(1)} s)`,
    );
    Object.assign(figures, {
      [`seed${seed}EpisodesStochastic`]: stochastic,
      [`seed${seed}EpisodesGreedy`]: greedy,
      [`seed${seed}FinalStochasticReturn`]: last.stochasticReturn,
      [`seed${seed}FinalGreedyReturn`]: last.greedyReturn,
      [`seed${seed}Episodes`]: r.episodes,
      [`seed${seed}WallSeconds`]: r.wallMs / 1000,
    });
    if (stochastic === null || greedy === null) allReached = false;
    if (stochastic !== null) reach.stochastic.push(stochastic);
    if (greedy !== null) reach.greedy.push(greedy);
  }
  figures.allReached = allReached;
  figures.medianEpisodesStochastic = reach.stochastic.length === seeds ? median(reach.stochastic) : null;
  figures.maxEpisodesStochastic = reach.stochastic.length === seeds ? Math.max(...reach.stochastic) : null;
  figures.medianEpisodesGreedy = reach.greedy.length === seeds ? median(reach.greedy) : null;
  figures.maxEpisodesGreedy = reach.greedy.length === seeds ? Math.max(...reach.greedy) : null;
  figures.wallSeconds = wallMs / 1000;
  log(
    `median episodes to within ${gap}: stochastic ${figures.medianEpisodesStochastic ?? 'not reached by every seed'}, ` +
      `greedy ${figures.medianEpisodesGreedy ?? 'not reached by every seed'}; wall ${(wallMs / 1000).toFixed(1)} s for ${seeds} seeds`,
  );
  return figures;
}
