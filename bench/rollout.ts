/**
 * The agent loop's own speed: scripted policies (random, oracle) playing blackjack through the
 * whole loop (prompt, policy call, tool-call parsing, env step, recording, quality check) on one
 * core. Target: episodesPerSec >= 20,000. usage: npm run bench -- rollout [--json] [EPISODES]
 */
import { blackjackSpec } from '../src/envs/blackjack/spec.ts';
import type { Policy } from '../src/policy/policy.ts';
import { oraclePolicy, randomPolicy } from '../src/policy/scripted.ts';
import { runRollouts } from '../src/rollout/rollouts.ts';
import type { BenchFigures } from './run.ts';

const CONCURRENCY = 64;
const REPEATS = 3;

async function measure(policy: Policy, episodes: number) {
  const options = blackjackSpec.options.parse({});
  let best = { episodesPerSec: 0, turnsPerSec: 0, meanReturn: NaN, ci: [NaN, NaN] as [number, number] };
  for (let i = 0; i < REPEATS; i++) {
    const { summary } = await runRollouts({ spec: blackjackSpec, options, policy, count: episodes, baseSeed: i * episodes, concurrency: CONCURRENCY });
    if (summary.episodes.failed > 0) throw new Error(`${policy.name}: ${summary.episodes.failed} episodes failed: ${JSON.stringify(summary.failureReasons)}`);
    if (summary.episodesPerSec > best.episodesPerSec) {
      best = { episodesPerSec: summary.episodesPerSec, turnsPerSec: summary.turnsPerSec, meanReturn: summary.meanReturn.mean, ci: summary.meanReturn.ci95 };
    }
  }
  return best;
}

export async function run(args: string[], log: (line: string) => void): Promise<BenchFigures> {
  const episodes = Number(args[0] ?? 20_000);
  if (!Number.isSafeInteger(episodes) || episodes < 1) throw new Error(`EPISODES must be a positive integer, got ${args[0]}`);
  await measure(randomPolicy(), Math.min(episodes, 2000)); // warm-up: JIT, the oracle's solver
  await measure(oraclePolicy(), Math.min(episodes, 2000));
  const figures: BenchFigures = { episodes, concurrency: CONCURRENCY };
  let slowest = Infinity;
  let slowestTurns = Infinity;
  for (const policy of [randomPolicy(), oraclePolicy()]) {
    const r = await measure(policy, episodes);
    log(
      `blackjack ${policy.name.padEnd(6)} ${Math.round(r.episodesPerSec).toLocaleString('en-US')} episodes/s, ` +
        `${Math.round(r.turnsPerSec).toLocaleString('en-US')} turns/s (best of ${REPEATS} x ${episodes}), ` +
        `mean return ${r.meanReturn.toFixed(4)} [${r.ci[0].toFixed(4)}, ${r.ci[1].toFixed(4)}]`,
    );
    figures[`${policy.name}EpisodesPerSec`] = Math.round(r.episodesPerSec);
    figures[`${policy.name}TurnsPerSec`] = Math.round(r.turnsPerSec);
    figures[`${policy.name}MeanReturn`] = r.meanReturn;
    slowest = Math.min(slowest, r.episodesPerSec);
    slowestTurns = Math.min(slowestTurns, r.turnsPerSec);
  }
  figures.episodesPerSec = Math.round(slowest);
  figures.turnsPerSec = Math.round(slowestTurns);
  log(`slowest: ${figures.episodesPerSec} episodes/s (target >= 20,000)`);
  return figures;
}
