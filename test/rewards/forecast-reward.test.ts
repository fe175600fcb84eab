/** The `forecast` reward part over recorded turns, and the oracle's target answer text for SFT. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ReportRecord } from '../../src/envs/env.ts';
import { forecastReward, forecastScore, turnForecastLosses } from '../../src/rewards/forecast-reward.ts';
import { reportTargetArguments, reportTargetCallText } from '../../src/rewards/report-target-text.ts';
import { makeTurn } from './make-turn.ts';

const record: ReportRecord = {
  questions: [
    { name: 'p_win', kind: 'probability', text: 'win?' },
    { name: 'p_state', kind: 'choice', options: ['A', 'B'], text: 'state?' },
  ],
  targets: { p_win: 0.6, p_state: { A: 0.9, B: 0.1 } },
  outcomes: { p_win: 1, p_state: 'B' },
};

const turnWith = (args: Record<string, unknown>, info: Record<string, unknown> = { report: record }) => {
  const turn = makeTurn({ actions: [{ id: 'c0', name: 'bet', arguments: args }] });
  turn.info = info;
  return turn;
};

test('forecast = −Σ losses; against the outcome or as excess over the oracle', () => {
  const turn = turnWith({ fraction: 0.1, p_win: 0.7, p_state: { A: 0.8, B: 0.2 } });
  const outcome = turnForecastLosses(turn, { against: 'outcome', rule: 'brier' })!;
  // (0.7 − 1)²; (0.8 − 0)² + (0.2 − 1)²
  assert.ok(Math.abs(outcome.p_win - 0.09) < 1e-12);
  assert.ok(Math.abs(outcome.p_state - 1.28) < 1e-12);
  assert.ok(Math.abs(forecastScore(turn, { against: 'outcome', rule: 'brier' }) + 1.37) < 1e-12);
  // (0.7 − 0.6)² + 2·(0.8 − 0.9)²
  assert.ok(Math.abs(forecastScore(turn, { against: 'oracle', rule: 'brier' }) + 0.03) < 1e-12);
  const reward = forecastReward({ against: 'oracle', rule: 'brier' });
  assert.equal(reward.name, 'forecast');
  assert.equal(reward.score(turn), forecastScore(turn, { against: 'oracle', rule: 'brier' }));
});

test('missing answers score the worst loss; a turn without a record scores 0; a bad record names the field', () => {
  const missing = turnWith({ fraction: 0.1 });
  // worst Brier 1 and multi-class 2, against the outcome
  assert.equal(forecastScore(missing, { against: 'outcome', rule: 'brier' }), -3);
  assert.equal(forecastScore(turnWith({ fraction: 0.1 }, {}), { against: 'oracle', rule: 'log' }), 0);
  const broken = turnWith({ fraction: 0.1 }, { report: { ...record, targets: { p_win: 'high' } } });
  assert.throws(() => forecastScore(broken, { against: 'oracle', rule: 'brier' }), /info\.report\.targets\.p_win/);
  const noTarget = turnWith({ fraction: 0.1 }, { report: { ...record, targets: { p_win: 0.5 } } });
  assert.throws(() => forecastScore(noTarget, { against: 'oracle', rule: 'brier' }), /no target for 'p_state'/);
});

test('the oracle target answer: the taken action with the oracle forecasts in place of the agent\'s', () => {
  const turn = turnWith({ fraction: 0.1, p_win: 0.2 });
  assert.deepEqual(reportTargetArguments(turn), { p_win: 0.6, p_state: { A: 0.9, B: 0.1 } });
  const text = reportTargetCallText(turn)!;
  assert.match(text, /^<tool_call>.*<\/tool_call>$/);
  assert.deepEqual(JSON.parse(text.slice('<tool_call>'.length, -'</tool_call>'.length)), {
    name: 'bet',
    arguments: { fraction: 0.1, p_win: 0.6, p_state: { A: 0.9, B: 0.1 } },
  });
  assert.equal(reportTargetCallText(turnWith({ fraction: 0.1 }, {})), null);
});
