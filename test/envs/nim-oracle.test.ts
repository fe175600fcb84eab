import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseTake } from '../../src/envs/nim/actions.ts';
import { agentValueVsRandom, opponentValueVsRandom } from '../../src/envs/nim/expectimax.ts';
import { nimOracle } from '../../src/envs/nim/oracle.ts';
import { boutonMove, nimSum } from '../../src/envs/nim/rules.ts';

/** Every position (heap tuple) with `count` heaps of 0..max, the cleared one excluded. */
function positions(count: number, max: number): number[][] {
  const out: number[][] = [];
  const build = (prefix: number[]): void => {
    if (prefix.length === count) {
      if (prefix.some((h) => h > 0)) out.push(prefix);
      return;
    }
    for (let h = 0; h <= max; h++) build([...prefix, h]);
  };
  build([]);
  return out;
}

/** The test's own minimax: can the player to move force taking the last object? */
const winMemo = new Map<string, boolean>();
function toMoveWins(heaps: number[]): boolean {
  const key = heaps.join(',');
  const cached = winMemo.get(key);
  if (cached !== undefined) return cached;
  let wins = false;
  for (let i = 0; i < heaps.length && !wins; i++) {
    for (let c = 1; c <= heaps[i] && !wins; c++) {
      const after = heaps.map((h, j) => (j === i ? h - c : h));
      // Clearing the table wins; otherwise win if the opponent then cannot.
      wins = after.every((h) => h === 0) || !toMoveWins(after);
    }
  }
  winMemo.set(key, wins);
  return wins;
}

function applyOracle(heaps: number[], opponent: 'optimal' | 'random'): number[] {
  const parsed = parseTake(heaps, nimOracle(heaps, opponent).action);
  assert.ok('move' in parsed, `oracle move is illegal at [${heaps}]`);
  return heaps.map((h, j) => (j === parsed.move.heap ? h - parsed.move.count : h));
}

test('Bouton: the position is lost for the player to move iff the nim-sum is 0 (brute force, every position)', () => {
  let won = 0;
  for (const [count, max] of [[1, 8], [2, 7], [3, 5], [4, 4]] as const) {
    for (const heaps of positions(count, max)) {
      const wins = toMoveWins(heaps);
      assert.equal(nimSum(heaps) !== 0, wins, `[${heaps}]`);
      assert.equal(boutonMove(heaps) !== null, wins, `[${heaps}]`);
      if (!wins) continue;
      won++;
      for (const opponent of ['optimal', 'random'] as const) {
        const after = applyOracle(heaps, opponent);
        const cleared = after.every((h) => h === 0);
        assert.ok(cleared || !toMoveWins(after), `oracle at [${heaps}] leaves [${after}] winning for the opponent`);
        assert.equal(nimOracle(heaps, opponent).forecasts!.winProbability, 1);
      }
    }
  }
  assert.ok(won > 700, `winning positions checked: ${won}`);
});

test('from a lost position the oracle stalls against the perfect opponent: 1 from the largest heap', () => {
  assert.deepEqual(nimOracle([1, 2, 3], 'optimal').action, { name: 'take', arguments: { heap: 3, count: 1 } });
  assert.deepEqual(nimOracle([5, 5], 'optimal').action, { name: 'take', arguments: { heap: 1, count: 1 } });
  assert.equal(nimOracle([5, 5], 'optimal').forecasts!.winProbability, 0);
  assert.deepEqual(nimOracle([3, 4, 5], 'optimal').action, { name: 'take', arguments: { heap: 1, count: 2 } });
});

/** The test's own expectimax on ordered heaps (no symmetry reduction). */
const agentMemo = new Map<string, number>();
const opponentMemo = new Map<string, number>();
function moves(heaps: number[]): number[][] {
  const out: number[][] = [];
  heaps.forEach((h, i) => {
    for (let c = 1; c <= h; c++) out.push(heaps.map((x, j) => (j === i ? x - c : x)));
  });
  return out;
}
function agentValue(heaps: number[]): number {
  const key = heaps.join(',');
  if (!agentMemo.has(key)) {
    agentMemo.set(key, Math.max(...moves(heaps).map((a) => (a.every((h) => h === 0) ? 1 : opponentValue(a)))));
  }
  return agentMemo.get(key)!;
}
function opponentValue(heaps: number[]): number {
  const key = heaps.join(',');
  if (!opponentMemo.has(key)) {
    const values = moves(heaps).map((a) => (a.every((h) => h === 0) ? -1 : agentValue(a)));
    opponentMemo.set(key, values.reduce((x, y) => x + y, 0) / values.length);
  }
  return opponentMemo.get(key)!;
}

test('expectimax against the random opponent matches a brute force, and the oracle plays its best move', () => {
  for (const [count, max] of [[2, 6], [3, 4], [4, 3]] as const) {
    for (const heaps of positions(count, max)) {
      assert.ok(Math.abs(agentValueVsRandom(heaps) - agentValue(heaps)) < 1e-12, `agent [${heaps}]`);
      assert.ok(Math.abs(opponentValueVsRandom(heaps) - opponentValue(heaps)) < 1e-12, `opponent [${heaps}]`);
      const after = applyOracle(heaps, 'random');
      const oracleValue = after.every((h) => h === 0) ? 1 : opponentValue(after);
      assert.ok(Math.abs(oracleValue - agentValue(heaps)) < 1e-12, `oracle move at [${heaps}] is not expectimax-best`);
      const p = nimOracle(heaps, 'random').forecasts!.winProbability;
      assert.ok(Math.abs(p - (agentValue(heaps) + 1) / 2) < 1e-12);
    }
  }
  // A lost position is still worth playing well against a random opponent.
  assert.ok(agentValueVsRandom([2, 2]) > -1);
});
