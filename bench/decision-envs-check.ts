/**
 * Monte-Carlo check of the kelly, newsvendor, hmm and market envs with default options: plays N
 * episodes per policy (oracle, uniform random over legal actions) through the env's public interface
 * and prints the mean return with its 95 % interval next to the mean per-episode `oracleReturn` (from
 * the final info) and the exact optimal return of the spec, where the env has them.
 * Usage: npx tsx bench/decision-envs-check.ts [episodes=2000]
 */
import { Rng } from '../src/core/random.ts';
import { meanCi, type MeanCi } from '../src/core/stats.ts';
import type { Env, EnvSpec, EnvStep } from '../src/envs/env.ts';
import { hmmSpec } from '../src/envs/hmm/spec.ts';
import { kellySpec } from '../src/envs/kelly/spec.ts';
import { marketSpec } from '../src/envs/market/spec.ts';
import { newsvendorSpec } from '../src/envs/newsvendor/spec.ts';

const episodes = Number(process.argv[2] ?? 2000);
if (!Number.isInteger(episodes) || episodes < 1) throw new Error(`episodes must be a positive integer, got ${process.argv[2]}`);

type Chooser = (env: Env, rng: Rng) => ReturnType<Env['legalActions']>[number];
const policies: Record<string, Chooser> = {
  oracle: (env) => env.oracle!().action,
  random: (env, rng) => {
    const legal = env.legalActions();
    return legal[rng.int(legal.length)];
  },
};

const fmt = (m: MeanCi): string => `${m.mean.toFixed(4)} [${m.ci95[0].toFixed(4)}, ${m.ci95[1].toFixed(4)}]`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
for (const spec of [kellySpec, newsvendorSpec, hmmSpec, marketSpec] as EnvSpec<any>[]) {
  const options = spec.options.parse({});
  const exact = spec.exact?.optimalReturn?.(options);
  console.log(`\n${spec.name}${exact === undefined ? '' : `: exact optimal return ${exact.toFixed(4)}`}`);
  for (const [name, choose] of Object.entries(policies)) {
    const returns = new Float64Array(episodes);
    const oracleReturns: number[] = [];
    let steps = 0;
    const started = performance.now();
    for (let e = 0; e < episodes; e++) {
      const env = spec.create(options) as Env;
      env.reset(e);
      const rng = new Rng(e, 99);
      let s: EnvStep;
      do {
        s = env.step(choose(env, rng)) as EnvStep;
        returns[e] += s.reward;
        steps++;
      } while (!s.done);
      if (typeof s.info?.oracleReturn === 'number') oracleReturns.push(s.info.oracleReturn);
    }
    const seconds = (performance.now() - started) / 1000;
    const oracleNote = oracleReturns.length ? `; mean info.oracleReturn ${fmt(meanCi(oracleReturns))}` : '';
    console.log(`  ${name.padEnd(7)} return ${fmt(meanCi(returns))}${oracleNote}; ${Math.round(steps / seconds)} steps/s`);
  }
}
