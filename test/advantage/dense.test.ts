import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { denseAdvantages } from '../../src/advantage/dense.ts';
import { assertClose } from './close.ts';

describe('denseAdvantages', () => {
  it('A = (r − mean) / (σ + ε) within each decision group', () => {
    // k = 4 samples scored [0.5, 0.5, −1, 0]: mean 0, Σd² = 1.5, sample σ = √0.5.
    const a = denseAdvantages([{ groupId: 'd1', samples: [0.5, 0.5, -1, 0].map((reward, j) => ({ sampleId: `d1:${j}`, reward })) }], {
      epsilon: 0,
    });
    assert.deepEqual(
      a.map((x) => x.sampleId),
      ['d1:0', 'd1:1', 'd1:2', 'd1:3'],
    );
    assertClose(
      a.map((x) => x.advantage),
      [Math.SQRT1_2, Math.SQRT1_2, -Math.SQRT2, 0],
    );
  });

  it('each decision is its own group, and a decision where every sample scored the same gets 0', () => {
    const a = denseAdvantages([
      { groupId: 'd1', samples: [{ sampleId: 'a', reward: 0.25 }, { sampleId: 'b', reward: 0.25 }] },
      { groupId: 'd2', samples: [{ sampleId: 'c', reward: 10 }, { sampleId: 'd', reward: 0 }] },
      { groupId: 'd3', samples: [{ sampleId: 'e', reward: 3 }] },
    ], { epsilon: 0 });
    assertClose(
      a.map((x) => x.advantage),
      [0, 0, Math.SQRT1_2, -Math.SQRT1_2, 0],
    );
  });

  it('population std as an option (the Alea seed)', () => {
    const a = denseAdvantages([{ groupId: 'd', samples: [{ sampleId: 'a', reward: 1 }, { sampleId: 'b', reward: 0 }] }], {
      epsilon: 0,
      std: 'population',
    });
    assertClose(a.map((x) => x.advantage), [1, -1]);
  });

  it('rejects a NaN reward and bad options, naming the field', () => {
    assert.throws(() => denseAdvantages([{ groupId: 'd', samples: [{ sampleId: 'a', reward: NaN }] }]), /decisions\.0\.samples\.0\.reward/);
    assert.throws(() => denseAdvantages([], { epsilon: -1 }), /dense\.epsilon/);
  });
});
