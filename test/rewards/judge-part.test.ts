/**
 * The LLM judge as a group reward part in an env run: blackjack episodes of the `random` policy, G
 * samples per seed, judged per group by a scripted judge (a Policy whose answer is a fixed JSON text).
 * A scored group gets part `judge` (weighted into the reward and the last turn) before its episodes
 * are handed on; a judge that never answers valid JSON leaves the group unscored, its rewards as
 * without a judge, and the group out of the advantage estimator's input.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scoredGroupsFromTrajectories } from '../../src/advantage/from-trajectories.ts';
import type { Completion } from '../../src/core/completion.ts';
import type { Trajectory } from '../../src/core/trajectory.ts';
import { builtinEnvs } from '../../src/envs/builtin.ts';
import { resolveEnvOptions } from '../../src/envs/options.ts';
import type { Policy, PolicyRequest } from '../../src/policy/policy.ts';
import { randomPolicy } from '../../src/policy/scripted.ts';
import { applyGroupScore, isGroupUnscored } from '../../src/rewards/group-reward.ts';
import { judgeRewardPart } from '../../src/rewards/judge.ts';
import { withGroupParts } from '../../src/rewards/judge-flags.ts';
import { runRollouts } from '../../src/rollout/rollouts.ts';

const spec = builtinEnvs.find((s) => s.name === 'blackjack');
assert.ok(spec);
const options = resolveEnvOptions(spec, {});

/** A judge that answers every request with the same text. */
function fixedJudge(text: string): Policy & { requests: PolicyRequest[] } {
  const requests: PolicyRequest[] = [];
  const completion: Completion = { text, promptTokenIds: null, completionTokenIds: null, logprobs: null, tokenIdsExact: false, finishReason: 'stop', modelId: 'judge', policyVersion: 0 };
  return {
    name: 'fixed-judge',
    contextLength: null,
    requests,
    async complete(request) {
      requests.push(request);
      return [completion];
    },
  };
}

const SCORES = [0.9, 0.5, 0.1];
const answer = JSON.stringify({ scores: SCORES.map((score, i) => ({ trajectory_id: String(i + 1), explanation: `#${i + 1}`, score })) });

async function play(judge: Policy | null, weight = 1) {
  const handedOn: Trajectory[] = [];
  const result = await runRollouts({
    spec: spec!,
    options,
    policy: randomPolicy(),
    seeds: [11, 12],
    groupSize: 3,
    concurrency: 4,
    rewards: withGroupParts(spec!.rewards?.(options), judge ? [judgeRewardPart({ judge, weight, maxRetries: 2 })] : []),
    onTrajectory: (t) => {
      handedOn.push(structuredClone(t));
    },
  });
  return { ...result, handedOn };
}

describe('LLM judge as a group reward part', () => {
  it('adds the judge part to every trajectory of a scored group, weighted into the reward, before handing it on', async () => {
    const plain = await play(null);
    const judge = fixedJudge(answer);
    const judged = await play(judge, 2);
    assert.equal(judge.requests.length, 2, 'one judge call per group');
    for (const request of judge.requests) assert.equal(request.messages[1].content.match(/<trajectory id=/g)?.length, 3);
    for (const [k, t] of judged.trajectories.entries()) {
      const base = plain.trajectories[k];
      assert.equal(t.seed, base.seed);
      assert.equal(t.rewardParts.judge, SCORES[t.sample], 'scores follow the sample order');
      assert.ok(Math.abs(t.reward - (base.reward + 2 * SCORES[t.sample])) < 1e-12);
      const turnSum = t.turns.reduce((sum, turn) => sum + turn.reward, 0);
      assert.ok(Math.abs(turnSum - t.reward) < 1e-12, 'the last turn carries the judge part');
      assert.equal(t.turns.at(-1)?.rewardParts.judge, SCORES[t.sample]);
      assert.equal(isGroupUnscored(t), false);
    }
    assert.equal(judged.handedOn.length, 6);
    for (const t of judged.handedOn) assert.equal(t.rewardParts.judge, SCORES[t.sample], 'onTrajectory sees the judged trajectory');
    assert.equal(scoredGroupsFromTrajectories(judged.trajectories).length, 2);
  });

  it('leaves a group unscored after invalid answers: no part, rewards unchanged, out of the advantage input', async () => {
    const plain = await play(null);
    const judge = fixedJudge('{"scores": "all good"');
    const judged = await play(judge);
    assert.equal(judge.requests.length, 2 * 3, 'the first try and two retries per group');
    for (const [k, t] of judged.trajectories.entries()) {
      assert.equal('judge' in t.rewardParts, false);
      assert.equal(t.reward, plain.trajectories[k].reward);
      assert.equal(t.metrics.judge_unscored, 1);
      assert.equal(isGroupUnscored(t), true);
    }
    assert.deepEqual(scoredGroupsFromTrajectories(judged.trajectories), []);
    assert.equal(scoredGroupsFromTrajectories(plain.trajectories).length, 2);
  });

  it('hands on the episodes of a group cut short by an abort, unscored', async () => {
    const controller = new AbortController();
    const judge = fixedJudge(answer);
    const handedOn: Trajectory[] = [];
    const result = await runRollouts({
      spec: spec!,
      options,
      policy: randomPolicy(),
      seeds: [11, 12],
      groupSize: 3,
      concurrency: 1,
      signal: controller.signal,
      rewards: withGroupParts(undefined, [judgeRewardPart({ judge })]),
      onEvent: (event) => {
        if (event.type === 'episode_started' && event.seed === 12 && event.sample === 1) controller.abort();
      },
      onTrajectory: (t) => {
        handedOn.push(t);
      },
    });
    assert.equal(judge.requests.length, 1, 'only the finished group is judged');
    assert.deepEqual(result.trajectories.map((t) => [t.seed, t.rewardParts.judge ?? null, t.metrics.judge_unscored ?? 0]), [
      [11, 0.9, 0], [11, 0.5, 0], [11, 0.1, 0], [12, null, 1], [12, null, 1],
    ]);
    assert.equal(handedOn.length, 5);
  });

  it('refuses a part that exists already and a score count that does not match', () => {
    const t = { id: 't', rewardParts: { judge: 1 }, reward: 1, metrics: {}, turns: [] } as unknown as Trajectory;
    assert.throws(() => applyGroupScore([t], { status: 'scored', scores: [0.5] }, 'judge'), /already exists/);
    assert.throws(() => applyGroupScore([t], { status: 'scored', scores: [0.5, 0.5] }, 'other'), /2 scores for 1 trajectories/);
  });
});
