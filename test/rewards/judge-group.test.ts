/**
 * The LLM judge with text judges (Policies that answer from the prompt alone): the shared prefix is
 * sent once and each trajectory labelled; valid JSON scores the group; bad answers are retried; a
 * group never scored stays unscored with its rewards untouched.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Completion } from '../../src/core/completion.ts';
import type { Message } from '../../src/core/messages.ts';
import type { Trajectory } from '../../src/core/trajectory.ts';
import type { Policy, PolicyRequest } from '../../src/policy/policy.ts';
import { applyJudgeResult, judgeGroup, judgeTrajectories, parseJudgeAnswer } from '../../src/rewards/judge.ts';
import { sharedPrefixLength } from '../../src/rewards/judge-prompt.ts';

const system: Message = { role: 'system', content: 'You play blackjack. SYSTEM-PROMPT-MARKER' };
const user: Message = { role: 'user', content: 'Your hand (sum 16, no usable ace). Dealer shows: 9.' };
const histories: Message[][] = [
  [system, user, { role: 'assistant', content: 'stick' }, { role: 'user', content: 'You lose.' }],
  [system, user, { role: 'assistant', content: 'hit' }, { role: 'user', content: 'You win.' }],
  [system, user, { role: 'assistant', content: 'hit' }, { role: 'user', content: 'Bust. You lose.' }],
];

function completion(text: string): Completion {
  return { text, promptTokenIds: null, completionTokenIds: null, logprobs: null, tokenIdsExact: false, finishReason: 'stop', modelId: 'judge', policyVersion: 0 };
}

/** A judge that reads the labelled trajectories and scores 1 for a win, 0.2 otherwise; `answers` overrides its tries in order. */
function textJudge(answers: (string | Error | null)[] = []): Policy & { requests: PolicyRequest[] } {
  const requests: PolicyRequest[] = [];
  return {
    name: 'text-judge',
    contextLength: null,
    requests,
    async complete(request) {
      requests.push(request);
      const planned = answers.shift();
      if (planned instanceof Error) throw planned;
      if (typeof planned === 'string') return [completion(planned)];
      const blocks = [...request.messages[1].content.matchAll(/<trajectory id="(\d+)">([\s\S]*?)<\/trajectory>/g)];
      const scores = blocks.map(([, id, body]) => ({ trajectory_id: id, explanation: 'by outcome', score: body.includes('You win') ? 1 : 0.2 }));
      return [completion('```json\n' + JSON.stringify({ scores }) + '\n```')];
    },
  };
}

function trajectory(id: string, messages: Message[]): Trajectory {
  return {
    id, runId: null, groupId: 'g', env: 'blackjack', seed: 0, sample: 0, policy: 'p', turns: [], messages, additionalHistories: [],
    reward: 0.5, rewardParts: { outcome: 0.5 }, metrics: {}, status: 'completed', statusReason: null, policyVersions: [0], quality: [],
    startedAt: '', finishedAt: '',
  };
}

describe('LLM judge', () => {
  it('sends the shared prefix once, labels each trajectory and scores the group', async () => {
    assert.equal(sharedPrefixLength(histories), 2);
    const judge = textJudge();
    const result = await judgeGroup(histories, { judge, seed: 9 });
    assert.equal(result.status, 'scored');
    assert.deepEqual(result.status === 'scored' && result.scores, [0.2, 1, 0.2]);
    assert.equal(result.attempts, 1);
    const prompt = judge.requests[0].messages[1].content;
    assert.equal(prompt.split('SYSTEM-PROMPT-MARKER').length - 1, 1, 'the shared prefix is sent once');
    assert.equal(prompt.split('Dealer shows: 9.').length - 1, 1);
    assert.equal(judge.requests[0].temperature, 0);
    assert.equal(judge.requests[0].seed, 9);
  });

  it('retries after junk, a schema miss, a missing id and a failed call', async () => {
    const judge = textJudge([
      'I think the second one is best.',
      JSON.stringify({ scores: [{ trajectory_id: '1', explanation: 'x', score: 7 }] }),
      new Error('upstream 503'),
      JSON.stringify({ scores: [{ trajectory_id: '1', explanation: 'x', score: 0.1 }, { trajectory_id: '2', explanation: 'x', score: 0.9 }] }),
    ]);
    const result = await judgeGroup(histories, { judge, maxRetries: 4 });
    assert.equal(result.status, 'scored');
    assert.equal(result.attempts, 5);
    assert.equal(result.errors.length, 4);
    assert.match(result.errors[0], /no JSON object/);
    assert.match(result.errors[1], /scores\.0\.score/);
    assert.match(result.errors[2], /upstream 503/);
    assert.match(result.errors[3], /no score for trajectory_id 3/);
  });

  it('leaves a group it cannot score unscored, rewards untouched', async () => {
    const judge = textJudge(['nope', 'still nope', 'never']);
    const group = histories.map((h, i) => trajectory(`t${i}`, h));
    const result = await judgeTrajectories(group, { judge, maxRetries: 2 });
    assert.equal(result.status, 'unscored');
    assert.equal(judge.requests.length, 3);
    for (const t of group) {
      assert.equal(t.reward, 0.5);
      assert.deepEqual(t.rewardParts, { outcome: 0.5 });
      assert.equal(t.metrics.judge_unscored, 1);
    }
  });

  it('adds the score as a weighted reward part of a scored group', async () => {
    const group = histories.map((h, i) => trajectory(`t${i}`, h));
    const result = await judgeTrajectories(group, { judge: textJudge(), weight: 2 });
    assert.equal(result.status, 'scored');
    assert.deepEqual(group.map((t) => t.rewardParts.judge), [0.2, 1, 0.2]);
    assert.deepEqual(group.map((t) => t.reward), [0.9, 2.5, 0.9]);
    assert.throws(() => applyJudgeResult(group, result), /already exists/);
  });

  it('rejects duplicate and unknown ids', () => {
    assert.throws(() => parseJudgeAnswer(JSON.stringify({ scores: [{ trajectory_id: '1', explanation: '', score: 1 }, { trajectory_id: '1', explanation: '', score: 0 }] }), 1), /twice/);
    assert.throws(() => parseJudgeAnswer(JSON.stringify({ scores: [{ trajectory_id: '4', explanation: '', score: 1 }] }), 1), /unknown trajectory_id/);
  });
});
