import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Trajectory, Turn } from '../../src/core/trajectory.ts';
import { scoredGroupsFromTrajectories } from '../../src/advantage/from-trajectories.ts';
import { grpoAdvantages } from '../../src/advantage/grpo.ts';

function turn(index: number, reward: number): Turn {
  return {
    index,
    observation: `obs ${index}`,
    calls: [],
    actions: [],
    informational: [],
    parseError: null,
    invalid: false,
    feedback: '',
    reward,
    rewardParts: { outcome: reward },
    done: false,
    truncated: false,
    info: {},
    timings: { policyMs: 0, envMs: 0 },
  };
}

function trajectory(id: string, groupId: string | null, sample: number, turnRewards: number[], reward: number): Trajectory {
  return {
    id,
    runId: null,
    groupId,
    env: 'bandit',
    seed: 3,
    sample,
    policy: 'test',
    turns: turnRewards.map((r, i) => turn(i, r)),
    messages: [],
    additionalHistories: [],
    reward,
    rewardParts: { outcome: reward },
    metrics: {},
    status: 'completed',
    statusReason: null,
    policyVersions: [0],
    quality: [],
    startedAt: '2025-01-01T00:00:00.000Z',
    finishedAt: '2025-01-01T00:00:01.000Z',
  };
}

const noAction = (index: number) => ({ state: `obs ${index}`, action: '[]' });

describe('scoredGroupsFromTrajectories', () => {
  it('groups by groupId in first-seen order, samples by index, ungrouped trajectories alone', () => {
    const groups = scoredGroupsFromTrajectories([
      trajectory('t1', 'g', 1, [0, 1], 1),
      trajectory('u', null, 0, [2], 2),
      trajectory('t0', 'g', 0, [0, 0], 0),
    ]);
    assert.deepEqual(groups, [
      {
        groupId: 'g',
        samples: [
          { trajectoryId: 't0', reward: 0, turnRewards: [0, 0], decisions: [noAction(0), noAction(1)] },
          { trajectoryId: 't1', reward: 1, turnRewards: [0, 1], decisions: [noAction(0), noAction(1)] },
        ],
      },
      { groupId: 'u', samples: [{ trajectoryId: 'u', reward: 2, turnRewards: [2], decisions: [noAction(0)] }] },
    ]);
  });

  it("records each turn's observation and action (argument key order ignored; an invalid answer as one action)", () => {
    const t = trajectory('t', 'g', 0, [0, 0, 1], 1);
    t.turns[0].actions = [{ id: 'call_1', name: 'hit', arguments: { b: 2, a: 1 } }];
    t.turns[1].actions = [{ id: 'call_9', name: 'hit', arguments: { a: 1, b: 2 } }];
    t.turns[2].invalid = true;
    const [d0, d1, d2] = scoredGroupsFromTrajectories([t])[0].samples[0].decisions!;
    assert.deepEqual(d0, { state: 'obs 0', action: '[["hit",{"a":1,"b":2}]]' });
    assert.equal(d1.action, d0.action, 'the call id and key order do not make another action');
    assert.deepEqual(d2, { state: 'obs 2', action: '["invalid"]' });
  });

  it('puts reward not earned by any turn (an episode-level judge) on the last turn', () => {
    // Turns earned 0.5 + 0.25; the trajectory scored 1.75 (a judge added 1).
    const [g] = scoredGroupsFromTrajectories([trajectory('t', 'g', 0, [0.5, 0.25], 1.75)]);
    assert.deepEqual(g.samples[0].turnRewards, [0.5, 1.25]);
  });

  it('keeps a zero-turn trajectory in its group with no turns to credit', () => {
    const groups = scoredGroupsFromTrajectories([trajectory('a', 'g', 0, [], -1), trajectory('b', 'g', 1, [1], 1)]);
    const advantages = grpoAdvantages(groups, { epsilon: 0 });
    assert.deepEqual(advantages[0].turnAdvantages, []);
    assert.ok(Math.abs(advantages[1].turnAdvantages[0] - Math.SQRT1_2) < 1e-12);
  });
});
