import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import type { Group, Trajectory } from '../../src/core/trajectory.ts';
import { oraclePolicy, randomPolicy } from '../../src/policy/scripted.ts';
import { episodesInFlight, runRollouts, type RolloutEvent } from '../../src/rollout/rollouts.ts';
import { summarizeRollouts } from '../../src/rollout/summary.ts';
import { add, completion, ScriptPolicy } from '../agent/counter-env.ts';
import type { Policy } from '../../src/policy/policy.ts';
import { counterSpec } from './counter-spec.ts';

const options = counterSpec.options.parse({});

/** A trajectory without its ids and timings, for comparing runs. */
function content(t: Trajectory): string {
  const volatile = new Set(['id', 'groupId', 'startedAt', 'finishedAt', 'latencyMs', 'timings', 'policyMs', 'envMs']);
  return JSON.stringify(t, (key, value) => (volatile.has(key) ? undefined : value));
}

describe('runRollouts', () => {
  it('plays G samples per seed, ordered by (seed, sample), grouped by seed', async () => {
    const { trajectories, groups, summary } = await runRollouts({ spec: counterSpec, options, policy: randomPolicy(), seeds: [3, 5], groupSize: 3, runId: 'run_x' });
    assert.deepEqual(trajectories.map((t) => [t.seed, t.sample]), [[3, 0], [3, 1], [3, 2], [5, 0], [5, 1], [5, 2]]);
    assert.deepEqual(groups.map((g) => [g.seed, g.env, g.runId]), [[3, 'counter', 'run_x'], [5, 'counter', 'run_x']]);
    assert.deepEqual(groups[1].trajectoryIds, trajectories.slice(3).map((t) => t.id));
    assert.ok(trajectories.every((t, i) => t.groupId === groups[Math.floor(i / 3)].id && t.runId === 'run_x'));
    assert.equal(summary.episodes.finished, 6);
    assert.equal(summary.meanTurns, summary.turns / 6);
  });

  it('results do not depend on the concurrency', async () => {
    const runs = await Promise.all(
      [1, 3, 16].map((concurrency) => runRollouts({ spec: counterSpec, options, policy: randomPolicy(), count: 12, baseSeed: 100, groupSize: 2, concurrency })),
    );
    const [one, three, sixteen] = runs.map((r) => r.trajectories.map(content));
    assert.deepEqual(three, one);
    assert.deepEqual(sixteen, one);
    assert.equal(new Set(one).size > 1, true);
  });

  it("a failing episode is recorded with its reason and the others finish", async () => {
    const { trajectories, summary } = await runRollouts({
      spec: counterSpec,
      options: counterSpec.options.parse({ brokenSeed: 2 }),
      policy: oraclePolicy(),
      count: 5,
      concurrency: 5,
    });
    assert.deepEqual(trajectories.map((t) => t.status), ['completed', 'completed', 'failed', 'completed', 'completed']);
    assert.equal(trajectories[2].statusReason, 'env.step threw: seed 2 is broken');
    assert.deepEqual(summary.episodes, { requested: 5, finished: 5, completed: 4, truncated: 0, failed: 1 });
    assert.deepEqual(summary.failureReasons, { 'env.step threw: seed 2 is broken': 1 });
    // Reasons are counted word for word up to 20 distinct ones; later ones under their head.
    const many = Array.from({ length: 25 }, (_, i) => ({ ...trajectories[2], statusReason: `policy 'p' failed: cause ${i}` }));
    const reasons = summarizeRollouts([...many, many[0]], 26, 1).failureReasons;
    assert.equal(reasons["policy 'p' failed: cause 0"], 2);
    assert.equal(reasons["policy 'p' failed: cause 19"], 1);
    assert.equal(reasons["policy 'p' failed"], 5);
    assert.equal(Object.keys(reasons).length, 21);
    // A reason that names an Object.prototype member is counted like any other.
    assert.deepEqual(summarizeRollouts([{ ...trajectories[2], statusReason: 'constructor' }], 1, 1).failureReasons, { constructor: 1 });
    assert.equal(summary.winRate, 1, 'rates are over the episodes that did not fail');
    assert.equal(summary.meanReturn.mean, 1);
    assert.deepEqual(summary.meanRewardParts, { env: 1 });
  });

  it('counts invalid actions, truncations and quality issues', async () => {
    const policy = new ScriptPolicy(['no idea', add(1)]);
    const { trajectories, summary } = await runRollouts({
      spec: counterSpec,
      options: counterSpec.options.parse({ retry: true }),
      policy,
      count: 1,
      episode: { maxTurns: 2 },
    });
    assert.equal(trajectories[0].status, 'truncated');
    assert.deepEqual(summary.truncationReasons, { 'max turns (2) reached': 1 });
    assert.equal(summary.llmCalls, 3);
    assert.equal(summary.invalidActionRate, 1 / 3);
    assert.equal(summary.invalidEndings, 0);
    assert.equal(summary.drawRate, 1);
    assert.deepEqual(trajectories[0].quality, [], 'a retried answer is not a turn without an action');
    const short = await runRollouts({ spec: counterSpec, options, policy: new ScriptPolicy(['']), count: 2, minTurns: 2 });
    assert.deepEqual(short.trajectories[0].quality.map((q) => q.kind).sort(), ['empty_response', 'no_action', 'too_few_turns']);
    assert.equal(short.summary.quality.byKind.empty_response.share, 1);
    assert.equal(short.summary.invalidEndings, 2);
  });

  it('reports progress events and hands each trajectory to onTrajectory', async () => {
    const events: RolloutEvent[] = [];
    const stored: string[] = [];
    const { trajectories } = await runRollouts({
      spec: counterSpec,
      options,
      policy: oraclePolicy(),
      count: 4,
      concurrency: 2,
      onEvent: (e) => events.push(e),
      onTrajectory: async (t) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        stored.push(t.id);
      },
    });
    assert.equal(events.filter((e) => e.type === 'episode_started').length, 4);
    const finished = events.filter((e) => e.type === 'episode_finished');
    assert.deepEqual(finished.map((e) => e.progress.finished), [1, 2, 3, 4]);
    const last = finished.at(-1)!.progress;
    assert.equal(last.total, 4);
    assert.equal(last.turns, trajectories.reduce((n, t) => n + t.turns.length, 0));
    assert.ok(last.episodesPerSec > 0);
    assert.deepEqual(stored.sort(), trajectories.map((t) => t.id).sort());
  });

  it('an error from onTrajectory stops the run and is thrown', async () => {
    let calls = 0;
    await assert.rejects(
      runRollouts({
        spec: counterSpec,
        options,
        policy: oraclePolicy(),
        count: 50,
        concurrency: 2,
        onTrajectory: () => {
          if (++calls === 3) throw new Error('disk full');
        },
      }),
      /disk full/,
    );
    assert.ok(calls < 50);
  });

  it('an aborted run keeps what finished', async () => {
    const controller = new AbortController();
    const { trajectories, groups, summary } = await runRollouts({
      spec: counterSpec,
      options,
      policy: oraclePolicy(),
      count: 20,
      concurrency: 1,
      signal: controller.signal,
      onTrajectory: (t) => {
        if (t.seed === 4) controller.abort();
      },
    });
    assert.equal(trajectories.length, 5);
    assert.equal(groups.length, 5);
    assert.deepEqual(groups.map((g) => g.trajectoryIds), trajectories.map((t) => [t.id]));
    assert.equal(summary.episodes.requested, 20);
    assert.equal(summary.episodes.finished, 5);
  });

  it('a group an abort cut short keeps the ids of the episodes that ran, kept or streamed', async () => {
    for (const keep of [true, false]) {
      const controller = new AbortController();
      const streamed: Group[] = [];
      const { groups } = await runRollouts({
        spec: counterSpec,
        options,
        policy: oraclePolicy(),
        seeds: [7, 8, 9],
        groupSize: 3,
        concurrency: 1,
        signal: controller.signal,
        keepTrajectories: keep,
        onTrajectory: (t) => {
          if (t.seed === 8 && t.sample === 1) controller.abort();
        },
        onGroup: (g) => void streamed.push(g),
      });
      assert.deepEqual(streamed.map((g) => [g.seed, g.trajectoryIds.length]), [[7, 3], [8, 2]], `keep ${keep}`);
      assert.deepEqual(groups, keep ? streamed : []);
    }
  });

  it('keepTrajectories false returns none but the same summary', async () => {
    const request = { spec: counterSpec, options, policy: randomPolicy(), count: 30, groupSize: 2, concurrency: 4 };
    const kept = await runRollouts(request);
    const streamed: Trajectory[] = [];
    const streamedGroups: Group[] = [];
    const flat = await runRollouts({
      ...request,
      keepTrajectories: false,
      onTrajectory: (t) => void streamed.push(t),
      onGroup: (g) => {
        // A group is handed on after all its episodes.
        const handed = new Set(streamed.map((t) => t.id));
        assert.ok(g.trajectoryIds.every((id) => handed.has(id)), `group ${g.seed}: handed on before its episodes`);
        streamedGroups.push(g);
      },
    });
    assert.deepEqual(flat.trajectories, []);
    assert.deepEqual(flat.groups, []);
    assert.equal(streamed.length, 60);
    assert.deepEqual(streamedGroups.map((g) => g.seed).sort((a, b) => a - b), kept.groups.map((g) => g.seed));
    for (const g of streamedGroups) {
      assert.equal(g.trajectoryIds.length, 2);
      assert.deepEqual(g.trajectoryIds, streamed.filter((t) => t.groupId === g.id).sort((a, b) => a.sample - b.sample).map((t) => t.id));
    }
    const figures = (s: typeof kept.summary) => ({ ...s, elapsedMs: 0, episodesPerSec: 0, turnsPerSec: 0 });
    assert.deepEqual(figures(flat.summary), figures(kept.summary));
  });

  it("keeps no more episodes in flight than fill the policy's rowsAtOnce", async () => {
    let inFlight = 0;
    let most = 0;
    const script = new ScriptPolicy([
      async () => {
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setTimeout(resolve, 2));
        inFlight--;
        return completion(add(1));
      },
    ]);
    const policy: Policy = { name: 'rows-3', contextLength: null, rowsAtOnce: 3, complete: (request) => script.complete(request) };
    const { summary } = await runRollouts({ spec: counterSpec, options, policy, count: 10, concurrency: 16, episode: { maxTurns: 3 } });
    assert.equal(summary.episodes.finished, 10);
    assert.equal(most, 3);
    // Without a bound the requested concurrency holds; K answers a decision take K rows of it.
    assert.equal(episodesInFlight(randomPolicy(), 16, 1), 16);
    assert.equal(episodesInFlight(policy, 2, 1), 2);
    assert.equal(episodesInFlight({ ...policy, rowsAtOnce: 64 }, 512, 8), 8);
    assert.equal(episodesInFlight({ ...policy, rowsAtOnce: 4 }, 512, 8), 1);
  });

  it('rejects bad requests with a UsageError naming the field', async () => {
    const base = { spec: counterSpec, options, policy: randomPolicy() };
    await assert.rejects(runRollouts({ ...base, count: 0 }), (e) => e instanceof UsageError && /episode count/.test(e.message));
    await assert.rejects(runRollouts({ ...base, seeds: [1.5] }), (e) => e instanceof UsageError && /seeds must be/.test(e.message));
    await assert.rejects(runRollouts({ ...base, count: 1, groupSize: 0 }), (e) => e instanceof UsageError && /group size/.test(e.message));
    await assert.rejects(runRollouts({ ...base, count: 1, concurrency: -1 }), (e) => e instanceof UsageError && /concurrency/.test(e.message));
    await assert.rejects(
      runRollouts({ ...base, count: 1, episode: { maxTurns: 0 } }),
      (e) => e instanceof UsageError && /maxTurns/.test(e.message),
    );
    await assert.rejects(
      // @ts-expect-error: a misspelt setting is refused, not ignored
      runRollouts({ ...base, count: 1, episode: { maxTurn: 3 } }),
      (e) => e instanceof UsageError && /maxTurn/.test(e.message),
    );
  });
});
