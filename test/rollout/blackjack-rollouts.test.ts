/** End to end: the scripted baselines play blackjack through the whole agent loop; their mean returns match the exact values. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { resolvePolicy } from '../../src/policy/resolve.ts';
import { runRollouts } from '../../src/rollout/rollouts.ts';

const options = blackjackSpec.options.parse({});
const EPISODES = 4000;

describe('blackjack through the agent loop', () => {
  for (const name of ['oracle', 'random', 'stick-at-17', 'always-stick']) {
    it(`${name}: mean return within 4 standard errors of the exact value`, async () => {
      const policy = await resolvePolicy(name, { spec: blackjackSpec, options });
      const { summary } = await runRollouts({ spec: blackjackSpec, options, policy, count: EPISODES, baseSeed: 10_000, concurrency: 32 });
      const exact = blackjackSpec.exact!.policyReturn!(options, (view) => policy.distribution!(view));
      const { mean, std, n } = summary.meanReturn;
      assert.equal(n, EPISODES);
      assert.equal(summary.episodes.completed, EPISODES);
      assert.equal(summary.invalidActionRate, 0);
      assert.equal(summary.quality.affected, 0);
      assert.ok(Math.abs(mean - exact) < (4 * std) / Math.sqrt(n), `${name}: mean ${mean}, exact ${exact}`);
      assert.ok(Math.abs(summary.winRate + summary.drawRate + summary.lossRate - 1) < 1e-12);
      if (name === 'oracle') {
        assert.ok(Math.abs(exact - -0.0466) < 0.0005);
        assert.ok(Math.abs(summary.winRate - 0.429) < 0.032, `win rate ${summary.winRate}`);
      }
    });
  }
});
