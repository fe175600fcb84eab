import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinEnvs } from '../../src/envs/builtin.ts';
import { checkEnvSpec } from '../../src/envs/registry.ts';
import { Rng } from '../../src/core/random.ts';
import type { Action, DecisionRule, EnvStep } from '../../src/envs/env.ts';
import { NimEnv } from '../../src/envs/nim/env.ts';
import { nimOptionsSchema, type NimOptions } from '../../src/envs/nim/options.ts';
import { nimOptimalReturn, nimPolicyReturn } from '../../src/envs/nim/solver.ts';
import { nimSpec } from '../../src/envs/nim/spec.ts';

const options = (raw: Record<string, unknown>): NimOptions => nimOptionsSchema.parse(raw);
const take = (heap: number, count: number): Action => ({ name: 'take', arguments: { heap, count } });
const randomRule: DecisionRule = (view) => {
  const actions = view.legalActions();
  return actions.map((action) => ({ action, p: 1 / actions.length }));
};
const oracleRule: DecisionRule = (view) => [{ action: view.oracle!().action, p: 1 }];

function playOut(env: NimEnv, seed: number, choose: (rng: Rng) => Action): { step: EnvStep; firstHeaps: number[]; observations: string[] } {
  const reset = env.reset(seed);
  const rng = new Rng(seed, 50);
  const firstHeaps = env.state().heaps;
  const observations = [reset.observation];
  for (;;) {
    const step = env.step(choose(rng));
    observations.push(step.observation);
    if (step.done) return { step, firstHeaps, observations };
  }
}

const xor = (heaps: number[]): number => heaps.reduce((a, b) => a ^ b, 0);

test('observations number the heaps from 1 and the take tool takes that number', () => {
  const env = new NimEnv(options({}));
  const reset = env.reset(0);
  assert.equal(reset.observation, 'Heap 1: 3, heap 2: 4, heap 3: 5. Your move.');
  assert.deepEqual(reset.info, { startHeaps: [3, 4, 5], first: 'agent' });
  assert.equal(reset.tools[0].name, 'take');
  assert.deepEqual((reset.tools[0].parameters as { required: string[] }).required, ['heap', 'count']);
  const step = env.step(take(1, 2));
  // 1 ^ 4 ^ 5 = 0: the perfect opponent has lost and stalls, taking 1 from the largest heap.
  assert.equal(step.observation, 'You took 2 from heap 1. Opponent took 1 from heap 3. Heap 1: 1, heap 2: 4, heap 3: 4. Your move.');
  assert.deepEqual(env.state(), { heaps: [1, 4, 4] });
  assert.equal(step.reward, 0);
  assert.equal(env.legalActions().length, 9);
});

test('taking the last object wins +1; the opponent taking it loses -1', () => {
  const env = new NimEnv(options({ heaps: [1, 1] }));
  env.reset(0);
  env.step(take(1, 1));
  // Opponent took the other one.
  assert.equal(env.validate(take(2, 1)), 'the game is over');
  const won = new NimEnv(options({ heaps: [2] }));
  won.reset(0);
  const step = won.step(take(1, 2));
  assert.deepEqual([step.reward, step.done, step.info!.outcome], [1, true, 'win']);
  assert.equal(step.observation, 'You took 2 from heap 1, the last object. You win (+1).');
  const lost = new NimEnv(options({ heaps: [1, 2] }));
  lost.reset(0);
  const last = lost.step(take(1, 1));
  assert.deepEqual([last.reward, last.done, last.info!.outcome, last.rewardParts], [-1, true, 'loss', { outcome: -1 }]);
  assert.match(last.observation, /Opponent took 2 from heap 2, the last object\. You lose \(-1\)\.$/);
});

test('validate explains every illegal take', () => {
  const env = new NimEnv(options({ heaps: [3, 1, 5] }));
  env.reset(0);
  env.step(take(2, 1));
  assert.equal(env.validate(take(2, 1)), 'heap 2 is empty');
  assert.equal(env.validate(take(0, 1)), 'heap must be an integer 1..3, got 0');
  assert.equal(env.validate(take(4, 1)), 'heap must be an integer 1..3, got 4');
  assert.match(env.validate(take(1, 9))!, /^count must be an integer 1\.\.\d \(heap 1 has \d\), got 9$/);
  assert.match(env.validate({ name: 'take', arguments: { heap: '1', count: 1 } })!, /heap must be an integer/);
  assert.match(env.validate({ name: 'take', arguments: { heap: 1, count: 1.5 } })!, /count must be an integer/);
  assert.match(env.validate({ name: 'take', arguments: { heap: 1, count: 1, why: 'x' } })!, /take has only heap and count arguments \(got why\)/);
  assert.match(env.validate({ name: 'pass', arguments: {} })!, /unknown action 'pass'/);
  assert.throws(() => env.step(take(2, 1)), /heap 2 is empty/);
  assert.deepEqual(env.invalidAction, { mode: 'retry', penalty: -1, maxRetries: 2 });
});

test('a seed fixes the start, the first mover and the random opponent', () => {
  const o = options({ heaps: 'random', heapCount: 4, maxHeap: 6, opponent: 'random', first: 'random' });
  const env = new NimEnv(o);
  const firsts = new Set<unknown>();
  const starts = new Set<string>();
  for (let seed = 0; seed < 200; seed++) {
    const a = playOut(env, seed, (rng) => env.legalActions()[rng.int(env.legalActions().length)]);
    const b = playOut(env, seed, (rng) => env.legalActions()[rng.int(env.legalActions().length)]);
    assert.deepEqual(a.observations, b.observations, `seed ${seed}`);
    const info = env.reset(seed).info!;
    const start = info.startHeaps as number[];
    assert.equal(start.length, 4);
    assert.ok(start.every((h) => Number.isInteger(h) && h >= 1 && h <= 6));
    firsts.add(info.first);
    starts.add(start.join(','));
  }
  assert.deepEqual([...firsts].sort(), ['agent', 'opponent']);
  assert.ok(starts.size > 150);
});

test('the oracle never loses from a won position, and the perfect opponent wins every lost one', () => {
  for (const opponent of ['optimal', 'random'] as const) {
    const env = new NimEnv(options({ heaps: 'random', heapCount: 3, maxHeap: 7, opponent, first: 'random' }));
    let won = 0;
    for (let seed = 0; seed < 400; seed++) {
      const { step, firstHeaps } = playOut(env, seed, () => env.oracle().action);
      if (xor(firstHeaps) !== 0) {
        assert.equal(step.reward, 1, `${opponent} seed ${seed} from [${firstHeaps}]`);
        won++;
      } else if (opponent === 'optimal') {
        assert.equal(step.reward, -1, `seed ${seed} from [${firstHeaps}]`);
      }
    }
    // About half the starts have the opponent move first, which the perfect opponent turns into a loss.
    assert.ok(won > (opponent === 'optimal' ? 150 : 250), `${opponent}: ${won} won starts`);
  }
});

test('the perfect opponent moving first wins a won start and the agent wins a lost one', () => {
  const env = new NimEnv(options({ heaps: [1, 2, 3], first: 'opponent' }));
  const reset = env.reset(5);
  assert.equal(reset.observation, 'Opponent took 1 from heap 3. Heap 1: 1, heap 2: 2, heap 3: 2. Your move.');
  assert.equal(playOut(env, 5, () => env.oracle().action).step.reward, 1);
  const env2 = new NimEnv(options({ heaps: [3, 4, 5], first: 'opponent' }));
  assert.equal(playOut(env2, 5, () => env2.oracle().action).step.reward, -1);
});

test('exact optimal returns: Bouton against the perfect opponent, expectimax against the random one', () => {
  assert.equal(nimOptimalReturn(options({})), 1);
  assert.equal(nimOptimalReturn(options({ first: 'opponent' })), -1);
  assert.equal(nimOptimalReturn(options({ heaps: [1, 2, 3] })), -1);
  assert.equal(nimOptimalReturn(options({ heaps: [1, 2, 3], first: 'opponent' })), 1);
  assert.equal(nimOptimalReturn(options({ heaps: [1, 2, 3], first: 'random' })), 0);
  // Random starts of 2 heaps of 1..3 against the perfect opponent: the 3 equal pairs of 9 are lost.
  assert.ok(Math.abs(nimOptimalReturn(options({ heaps: 'random', heapCount: 2, maxHeap: 3 })) - (6 - 3) / 9) < 1e-12);
  // [1,2,3] agent first vs random: the oracle policy's exact return equals the optimum.
  for (const raw of [
    { heaps: [1, 2, 3], opponent: 'random' },
    { heaps: [2, 2], opponent: 'random', first: 'random' },
    { heaps: 'random', heapCount: 3, maxHeap: 4, opponent: 'random', first: 'random' },
    { heaps: 'random', heapCount: 3, maxHeap: 4, opponent: 'optimal', first: 'random' },
  ]) {
    const o = options(raw);
    const optimal = nimOptimalReturn(o);
    assert.ok(Math.abs(nimPolicyReturn(o, oracleRule) - optimal) < 1e-12, JSON.stringify(raw));
    assert.ok(nimPolicyReturn(o, randomRule) < optimal, JSON.stringify(raw));
  }
  const lostVsRandom = nimOptimalReturn(options({ heaps: [1, 2, 3], opponent: 'random' }));
  assert.ok(lostVsRandom > -1 && lostVsRandom < 1);
});

test('policyReturn agrees with Monte Carlo play of the env', () => {
  const o = options({ heaps: [2, 3, 4], opponent: 'random', first: 'random' });
  // A rule that depends on the order: always the first nonempty heap, one object at a time.
  const firstHeapRule: DecisionRule = (view) => [{ action: view.legalActions()[0], p: 1 }];
  const env = new NimEnv(o);
  const n = 6000;
  let total = 0;
  for (let seed = 0; seed < n; seed++) total += playOut(env, seed, () => env.legalActions()[0]).step.reward;
  const exact = nimPolicyReturn(o, firstHeapRule);
  // Returns are +-1: the standard error is at most 1/sqrt(n).
  assert.ok(Math.abs(total / n - exact) < 4 / Math.sqrt(n), `MC ${total / n} vs exact ${exact}`);
});

test('policyReturn rejects illegal moves, non-distributions and state spaces too large to enumerate', () => {
  const o = options({});
  assert.throws(() => nimPolicyReturn(o, () => [{ action: take(9, 1), p: 1 }]), /heap must be an integer 1\.\.3/);
  assert.throws(() => nimPolicyReturn(o, (v) => [{ action: v.legalActions()[0], p: 0.3 }]), /sum to 0.3/);
  assert.throws(() => nimPolicyReturn(options({ heaps: [15, 15, 15, 15, 15] }), randomRule), /exceed the exact-evaluation limit/);
});

test('options are strict, bounded, and a single heap cannot start with the opponent', () => {
  assert.deepEqual(options({}), { heaps: [3, 4, 5], heapCount: 3, maxHeap: 7, opponent: 'optimal', first: 'agent', starts: 'all' });
  for (const bad of [{ heap: [1] }, { heaps: [0, 3] }, { heaps: [16] }, { heaps: [] }, { heaps: [1, 1, 1, 1, 1, 1, 1] }, { heaps: 'many' }, { opponent: 'smart' }, { maxHeap: 0 }, { heapCount: 7 }]) {
    assert.equal(nimOptionsSchema.safeParse(bad).success, false, JSON.stringify(bad));
  }
  const single = nimOptionsSchema.safeParse({ heaps: [5], first: 'opponent' });
  assert.equal(single.success, false);
  assert.deepEqual(single.error!.issues[0].path, ['first']);
  assert.equal(nimSpec.kind, 'outcome');
  assert.match(nimSpec.instructions(options({ opponent: 'random' })), /at random/);
  assert.match(nimSpec.instructions(options({})), /take.*last object wins/s);
});

test('registered as a built-in env that satisfies the contract', () => {
  assert.ok(builtinEnvs.includes(nimSpec));
  checkEnvSpec(nimSpec, 'nim');
});
