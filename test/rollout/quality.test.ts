import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runEpisode } from '../../src/agent/episode.ts';
import type { Trajectory } from '../../src/core/trajectory.ts';
import { checkTrajectoryQuality, formatQualityReport, summarizeQuality } from '../../src/rollout/quality.ts';
import { add, completion, CounterEnv, ScriptPolicy } from '../agent/counter-env.ts';

function play(answers: ConstructorParameters<typeof ScriptPolicy>[0]): Promise<Trajectory> {
  return runEpisode({
    env: new CounterEnv(),
    envName: 'counter',
    instructions: 'Reach the target.',
    policy: new ScriptPolicy(answers),
    seed: 0,
    maxTurns: 5,
    maxTokens: 16,
    temperature: 1,
    maxInformationalCalls: 1,
  });
}

describe('checkTrajectoryQuality', () => {
  it('a clean episode has no issues', async () => {
    assert.deepEqual(checkTrajectoryQuality(await play([add(3), add(1)])), []);
  });

  it('flags an empty response and the turn left without an action', async () => {
    const issues = checkTrajectoryQuality(await play(['  ']));
    assert.deepEqual(issues.map((i) => [i.kind, i.turn]), [['empty_response', 0], ['no_action', 0]]);
    assert.match(issues[1].message, /turn 0 has no action: Invalid answer: the answer is empty/);
  });

  it('a refused action is a turn where no action stepped the env', async () => {
    const issues = checkTrajectoryQuality(await play([add(3), add(3)]));
    assert.deepEqual(issues.map((i) => [i.kind, i.turn]), [['no_action', 1]]);
  });

  it('a server tool call with empty text is not an empty response', async () => {
    const t = await play([completion('', { toolCalls: [{ name: 'add', arguments: '{"n": 3}' }] }), add(1)]);
    assert.deepEqual(checkTrajectoryQuality(t), []);
  });

  it('too few turns, by threshold', async () => {
    const t = await play([add(3), add(1)]);
    assert.deepEqual(checkTrajectoryQuality(t, { minTurns: 2 }), []);
    assert.deepEqual(checkTrajectoryQuality(t, { minTurns: 3 }).map((i) => i.kind), ['too_few_turns']);
  });

  it('a call sent without a system prompt (e.g. a logged conversation) is flagged once', async () => {
    const t = await play([add(3), add(1)]);
    for (const turn of t.turns) turn.calls[0].messages = turn.calls[0].messages.slice(1);
    assert.deepEqual(checkTrajectoryQuality(t).map((i) => [i.kind, i.turn]), [['missing_system_prompt', 0]]);
  });
});

describe('summarizeQuality', () => {
  it('counts issues per kind and the share of episodes affected', async () => {
    const ts = await Promise.all([play([add(3), add(1)]), play(['']), play([add(3), add(3)]), play([add(3), add(1)])]);
    for (const t of ts) t.quality = checkTrajectoryQuality(t);
    const report = summarizeQuality(ts);
    assert.equal(report.episodes, 4);
    assert.equal(report.affected, 2);
    assert.equal(report.affectedShare, 0.5);
    assert.deepEqual(report.byKind.no_action, { issues: 2, episodes: 2, share: 0.5 });
    assert.deepEqual(report.byKind.empty_response, { issues: 1, episodes: 1, share: 0.25 });
    assert.deepEqual(report.byKind.too_few_turns, { issues: 0, episodes: 0, share: 0 });
    assert.deepEqual(formatQualityReport(report), [
      'rollout quality: 2/4 episodes clean (50.0%)',
      '  empty_response: 1 issues in 1 episodes (25.0%)',
      '  no_action: 2 issues in 2 episodes (50.0%)',
    ]);
  });
});
