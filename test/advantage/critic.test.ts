import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { computeAdvantages, learnFromBatch } from '../../src/advantage/compute.ts';
import {
  actionValuesFromJson,
  actionValuesToJson,
  criticAdvantages,
  learnActionValues,
  type ActionValueTable,
} from '../../src/advantage/critic.ts';
import { INVALID_ACTION_KEY, type ScoredGroup, type ScoredSample } from '../../src/advantage/types.ts';
import { UsageError } from '../../src/core/errors.ts';
import { assertClose } from './close.ts';

/** A sample that saw `path`'s env states (also its observations) and took its actions, earning `turnRewards`. */
function sample(id: string, path: [state: string, action: string][], turnRewards: number[]): ScoredSample {
  return {
    trajectoryId: id,
    reward: turnRewards.reduce((a, b) => a + b, 0),
    turnRewards,
    decisions: path.map(([state, action]) => ({ state: `obs ${state}`, action, envState: state })),
  };
}

function group(id: string, samples: ScoredSample[]): ScoredGroup {
  return { groupId: id, samples };
}

/** A table holding exactly these (state, action, visits, value) entries. */
function table(entries: [string, string, number, number][]): ActionValueTable {
  const t: ActionValueTable = new Map();
  for (const [state, action, visits, value] of entries) {
    if (!t.has(state)) t.set(state, new Map());
    t.get(state)!.set(action, { visits, value });
  }
  return t;
}

describe('learnActionValues', () => {
  it('keeps the running mean of the returns-to-go, at step 1/n until the rate floor', () => {
    const t: ActionValueTable = new Map();
    // Two turns: the first decision's return-to-go is 0 + 1, the second's 1.
    learnActionValues(t, [group('g', [sample('a', [['12', 'hit'], ['19', 'stick']], [0, 1]), sample('b', [['12', 'hit']], [-1])])], { rate: 0.25 });
    assert.deepEqual(t.get('12')!.get('hit'), { visits: 2, value: 0 }); // (1 + −1) / 2
    assert.deepEqual(t.get('19')!.get('stick'), { visits: 1, value: 1 });
    // Visits 3 and 4: steps 1/3, then the floor 0.25 (1/4 = 0.25), then 0.25 again at visit 5.
    learnActionValues(t, [group('h', [sample('c', [['12', 'hit']], [1])])], { rate: 0.25 });
    assert.ok(Math.abs(t.get('12')!.get('hit')!.value - 1 / 3) < 1e-12);
    learnActionValues(t, [group('h', [sample('c', [['12', 'hit']], [1])])], { rate: 0.25 });
    learnActionValues(t, [group('h', [sample('c', [['12', 'hit']], [-1])])], { rate: 0.4 });
    // 1/3 + 0.25 (1 − 1/3) = 0.5; then max(1/5, 0.4) = 0.4: 0.5 + 0.4 (−1 − 0.5) = −0.1
    assert.ok(Math.abs(t.get('12')!.get('hit')!.value - -0.1) < 1e-12);
    assert.equal(t.get('12')!.get('hit')!.visits, 5);
  });

  it('forgets the state updated longest ago past maxStates', () => {
    const t: ActionValueTable = new Map();
    learnActionValues(t, [group('g', [sample('a', [['A', 'x']], [1]), sample('b', [['B', 'x']], [1])])], { maxStates: 2 });
    learnActionValues(t, [group('g', [sample('a', [['A', 'x']], [1]), sample('c', [['C', 'x']], [1])])], { maxStates: 2 });
    assert.deepEqual([...t.keys()], ['A', 'C']);
  });

  it('keys by the observation when asked, and says what is missing when the env state is', () => {
    const t: ActionValueTable = new Map();
    learnActionValues(t, [group('g', [sample('a', [['12', 'hit']], [1])])], { key: 'observation' });
    assert.deepEqual([...t.keys()], ['obs 12']);
    const bare: ScoredSample = { trajectoryId: 'x', reward: 1, decisions: [{ state: 'obs', action: 'hit' }] };
    assert.throws(() => learnActionValues(t, [group('g', [bare])]), /groups\.0\.samples\.0\.decisions\.0\.envState is missing/);
  });
});

describe('criticAdvantages', () => {
  const known = table([
    ['16 vs 5', '"stick"', 4, -0.2],
    ['16 vs 5', '"hit"', 9, -0.4],
    ['16 vs 10', '"stick"', 3, -0.5], // below minVisits 4
    ['16 vs 10', '"hit"', 8, -0.55],
  ]);
  const batch = [
    group('g', [
      sample('stick', [['16 vs 5', '"stick"']], [1]),
      sample('hit', [['16 vs 5', '"hit"'], ['20 vs 5', '"stick"']], [0, -1]),
      sample('far', [['16 vs 10', '"hit"']], [-1]),
      sample('new', [['13 vs 2', '"hit"']], [1]),
    ]),
  ];

  it('judges each decision by its action value against the mean over the state, per state std + ε', () => {
    // 16 vs 5: mean −0.3, population std 0.1 → ±0.1 / 0.15. The later state, 16 vs 10 (one known
    // action) and 13 vs 2 (unknown) get 0. The samples' own returns do not enter.
    const a = criticAdvantages(batch, known, { epsilon: 0.05 });
    assertClose(a[0].turnAdvantages, [0.1 / 0.15]);
    assertClose(a[1].turnAdvantages, [-0.1 / 0.15, 0]);
    assertClose(a[2].turnAdvantages, [0]);
    assertClose(a[3].turnAdvantages, [0]);
    assertClose(criticAdvantages(batch, known, { scale: 'none' })[1].turnAdvantages, [-0.1, 0]);
    // With minVisits 3, 16 vs 10 compares too: mean −0.525, std 0.025, ε 0 → hit −1.
    assertClose(criticAdvantages(batch, known, { minVisits: 3, epsilon: 0 })[2].turnAdvantages, [-1]);
  });

  it('judges a refused answer against the legal actions without letting it into their baseline', () => {
    const withInvalid = table([
      ['16 vs 5', '"stick"', 4, -0.2],
      ['16 vs 5', '"hit"', 9, -0.4],
      ['16 vs 5', INVALID_ACTION_KEY, 5, -1],
    ]);
    const a = criticAdvantages(
      [group('g', [sample('stick', [['16 vs 5', '"stick"']], [1]), sample('bad', [['16 vs 5', INVALID_ACTION_KEY]], [-1])])],
      withInvalid,
      { epsilon: 0.05 },
    );
    assertClose(a[0].turnAdvantages, [0.1 / 0.15]); // as without the refused answer
    assertClose(a[1].turnAdvantages, [-0.7 / 0.15]);
  });

  it('through computeAdvantages: judged with the table before the batch, which learnFromBatch then folds in', () => {
    const t: ActionValueTable = new Map();
    const deal = [group('g', [0, 1, 2, 3].map((i) => sample(`s${i}`, [['12', i % 2 ? '"hit"' : '"stick"']], [i % 2 ? 1 : -1])))];
    const config = { estimator: 'critic', minVisits: 2, epsilon: 0 } as const;
    const first = computeAdvantages(deal, config, { actionValues: t });
    assertClose(first.advantages.map((x) => x.turnAdvantages[0]), [0, 0, 0, 0]);
    learnFromBatch(deal, config, { actionValues: t });
    const second = computeAdvantages(deal, config, { actionValues: t });
    assertClose(second.advantages.map((x) => x.turnAdvantages[0]), [-1, 1, -1, 1]);
    // The other estimators learn nothing across batches.
    const untouched: ActionValueTable = new Map();
    learnFromBatch(deal, { estimator: 'grpo' }, { actionValues: untouched });
    assert.equal(untouched.size, 0);
  });

  it('rejects bad options naming the field, and a critic without its table', () => {
    const deal = [group('g', [sample('a', [['12', 'hit']], [1])])];
    assert.throws(() => computeAdvantages(deal, { estimator: 'critic', rate: 0 }, { actionValues: new Map() }), (e) => e instanceof UsageError && /advantage\.rate: must be > 0/.test(e.message));
    assert.throws(() => computeAdvantages(deal, { estimator: 'critic', key: 'history' } as never, { actionValues: new Map() }), (e) => e instanceof UsageError && /advantage\.key/.test(e.message));
    assert.throws(() => computeAdvantages(deal, { estimator: 'critic' }), /needs its table of action values/);
  });
});

describe('action values as JSON', () => {
  it('round-trips exactly, in update order', () => {
    const t = table([
      ['b', '"x"', 3, 0.1 + 0.2],
      ['a', '"y"', 1, -1 / 3],
    ]);
    const back = actionValuesFromJson(JSON.parse(JSON.stringify(actionValuesToJson(t))), 'checkpoint');
    assert.deepEqual(back, t);
    assert.deepEqual([...back.keys()], ['b', 'a']);
  });

  it('names the bad entry', () => {
    assert.throws(() => actionValuesFromJson([['s', [['"x"', 0, 1]]]], 'the checkpoint of step 3: actionValues'), (e) => e instanceof UsageError && /step 3: actionValues.*0\.1\.0\.1/.test(e.message));
  });
});
