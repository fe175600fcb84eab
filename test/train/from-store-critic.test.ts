/**
 * The critic estimator offline (train --from-store): with no earlier steps, its table learns the
 * stored returns, then judges the same trajectories by them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson } from '../../src/core/canonical.ts';
import type { Trajectory } from '../../src/core/trajectory.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { randomPolicy } from '../../src/policy/scripted.ts';
import { runRollouts } from '../../src/rollout/rollouts.ts';
import { samplesFromTrajectories } from '../../src/train/from-store-samples.ts';

function selection(trajectories: Trajectory[]) {
  return { trajectories, read: trajectories.length, skipped: {} as never, skippedIds: {} as never, unknownTasks: [] };
}

test('offline, each first decision is judged by the mean stored return of its action in its state', async () => {
  const options = blackjackSpec.options.parse({});
  const { trajectories } = await runRollouts({ spec: blackjackSpec, options, policy: randomPolicy(), count: 150, groupSize: 4 });
  // Under 50 visits a (state, action) value is the plain mean of its returns-to-go (rate 0.02).
  const returns = new Map<string, number[]>();
  const keyOf = (t: Trajectory, k: number) => `${canonicalJson(t.turns[k].state)} ${t.turns[k].actions[0]?.name}`;
  for (const t of trajectories) {
    t.turns.forEach((turn, k) => {
      const togo = t.turns.slice(k).reduce((sum, x) => sum + x.reward, 0);
      returns.set(keyOf(t, k), [...(returns.get(keyOf(t, k)) ?? []), togo]);
    });
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const data = samplesFromTrajectories(selection(trajectories), { advantage: { estimator: 'critic', minVisits: 1, scale: 'none' } });
  let compared = 0;
  for (const a of data.advantages.advantages) {
    const t = trajectories.find((x) => x.id === a.trajectoryId)!;
    const state = canonicalJson(t.turns[0].state);
    const stick = returns.get(`${state} stick`);
    const hit = returns.get(`${state} hit`);
    if (!stick || !hit || stick.length >= 50 || hit.length >= 50) continue;
    const own = t.turns[0].actions[0].name === 'stick' ? mean(stick) : mean(hit);
    assert.ok(Math.abs(a.turnAdvantages[0] - (own - (mean(stick) + mean(hit)) / 2)) < 1e-9, `${state}`);
    compared++;
  }
  assert.ok(compared > 100, `first decisions whose state saw both moves: ${compared}`);
  // Trajectories recorded without the env's state (e.g. by the proxy) say so.
  const bare = trajectories.map((t) => ({ ...t, turns: t.turns.map(({ state: _state, ...turn }) => turn) }));
  assert.throws(() => samplesFromTrajectories(selection(bare), { advantage: { estimator: 'critic' } }), /envState is missing.*use key 'observation'/);
});
