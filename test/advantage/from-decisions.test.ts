/** Per-decision groups from recorded calls (LlmCall.decision): hand-computed GRPO within each decision. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decisionAdvantages, decisionGroupsFromTrajectories } from '../../src/advantage/from-decisions.ts';
import type { Completion } from '../../src/core/completion.ts';
import type { LlmCall, Trajectory, Turn } from '../../src/core/trajectory.ts';
import { assertClose } from './close.ts';

const completion = (text: string): Completion => ({
  text,
  promptTokenIds: [1, 2],
  completionTokenIds: [3],
  logprobs: [-0.5],
  tokenIdsExact: true,
  finishReason: 'stop',
  modelId: 'm',
  policyVersion: 0,
});

function call(rewards: (number | null)[], invalid: boolean[] = rewards.map(() => false)): LlmCall {
  return {
    messages: [],
    tools: [],
    completion: completion('played'),
    latencyMs: 1,
    decision: { alternatives: rewards.slice(1).map((_, j) => completion(`alt ${j}`)), rewards, invalid },
  };
}

function trajectory(id: string, calls: LlmCall[][]): Trajectory {
  const turns = calls.map((c, index) => ({ index, calls: c }) as unknown as Turn);
  return { id, turns, status: 'completed' } as unknown as Trajectory;
}

describe('decision advantages', () => {
  it('one group per call, null rewards left out, GRPO with the sample std within each', () => {
    const t = trajectory('t1', [[call([1, 0, 0, null])], [call([0.5, 0.5], [false, false])]]);
    const { groups, refs } = decisionGroupsFromTrajectories([t, trajectory('t2', [[{ ...call([0]), decision: undefined }]])]);
    assert.deepEqual(
      groups.map((g) => [g.groupId, g.samples.map((s) => s.reward)]),
      [
        ['t1:0:0', [1, 0, 0]],
        ['t1:1:0', [0.5, 0.5]],
      ],
    );
    assert.equal(refs.get('t1:0:0:1')?.completion.text, 'alt 0');
    assert.equal(refs.get('t1:0:0:0')?.completion.text, 'played');
    const result = decisionAdvantages([t]);
    // [1, 0, 0]: mean 1/3, sample std √(1/3); the tied decision gets 0.
    const s = Math.sqrt(1 / 3);
    assertClose(result.samples.map((x) => x.advantage), [(2 / 3) / (s + 1e-4), (-1 / 3) / (s + 1e-4), (-1 / 3) / (s + 1e-4), 0, 0], 1e-9);
    assert.equal(result.stats.groups, 2);
    assert.equal(result.stats.zeroVarianceGroups, 1);
    const dropped = decisionAdvantages([t], { dropZeroVariance: true });
    assert.equal(dropped.samples.length, 3);
    assert.equal(dropped.stats.droppedGroups, 1);
    // The tied decision's samples are kept aside at advantage 0 (what 'penalize' trains when all were refused).
    assert.deepEqual(dropped.droppedSamples.map((x) => [x.turn, x.sample, x.advantage]), [[1, 0, 0], [1, 1, 0]]);
    assert.deepEqual(result.droppedSamples, []);
  });

  it('an invalid sample carries the penalty it was scored with', () => {
    const t = trajectory('t', [[call([0.2, -1], [false, true])]]);
    const [a, b] = decisionAdvantages([t]).samples;
    assert.equal(b.invalid, true);
    assert.equal(b.reward, -1);
    assert.ok(a.advantage > 0 && b.advantage < 0);
  });
});
