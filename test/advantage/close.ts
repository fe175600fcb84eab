/** Approximate equality for advantage arrays, with a message that shows both sides. */
import assert from 'node:assert/strict';

export function assertClose(actual: readonly number[], expected: readonly number[], tolerance = 1e-9): void {
  assert.equal(actual.length, expected.length, `length: got [${actual.join(', ')}], want [${expected.join(', ')}]`);
  actual.forEach((a, i) => {
    assert.ok(
      Math.abs(a - expected[i]) <= tolerance,
      `index ${i}: got ${a}, want ${expected[i]} (got [${actual.join(', ')}], want [${expected.join(', ')}])`,
    );
  });
}

/** The single advantage of each one-turn trajectory, in order. */
export function firstTurns(advantages: readonly { turnAdvantages: number[] }[]): number[] {
  return advantages.map((a) => {
    assert.ok(a.turnAdvantages.length >= 1, 'expected at least one turn');
    return a.turnAdvantages[0];
  });
}
