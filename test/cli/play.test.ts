import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import { runCli, scratchDir } from './run-cli.ts';

const EXAMPLE = resolve(import.meta.dirname, '../../examples/guess-number.ts');
const BAD_ENV = resolve(import.meta.dirname, '../fixtures/bad-env.ts');

test('play --json reports the documented fields, and the oracle matches the DP value', () => {
  const dir = scratchDir();
  const r = runCli(['play', '--env', 'blackjack', '--policy', 'oracle', '--episodes', '4000', '--seed', '7', '--json'], dir);
  assert.equal(r.code, 0, r.stderr);
  const out = r.json();
  for (const key of ['env', 'policy', 'episodes', 'meanReturn', 'ci95', 'winRate', 'lossRate', 'drawRate', 'invalidRate', 'exactReturn', 'optimalReturn']) {
    assert.ok(key in out, `missing ${key}`);
  }
  assert.equal(out.env, 'blackjack');
  assert.equal(out.policy, 'oracle');
  assert.equal(out.episodes, 4000);
  assert.ok(Math.abs((out.exactReturn as number) + 0.0466) < 5e-4);
  assert.equal(out.optimalReturn, out.exactReturn);
  const [lo, hi] = out.ci95 as [number, number];
  // A 95 % interval may miss; widen to ~4 sigma so the test is not flaky yet still catches a wrong env or policy.
  const half = (hi - lo) / 2;
  assert.ok(Math.abs((out.meanReturn as number) - (out.exactReturn as number)) < 2 * half, `${out.meanReturn} vs ${out.exactReturn}`);
  assert.ok(Math.abs((out.winRate as number) + (out.lossRate as number) + (out.drawRate as number) - 1) < 1e-9);
  assert.equal(out.invalidRate, 0);
  assert.ok(existsSync(join(dir, '.spindle', 'spindle.db')));

  const runs = runCli(['runs', '--json'], dir).json().runs as { id: string; status: string }[];
  assert.equal(runs.length, 1);
  assert.equal(runs[0].id, out.run);
  assert.equal(runs[0].status, 'finished');
  const shown = runCli(['show', out.run as string, '--trajectories', '2', '--json'], dir).json();
  assert.equal((shown.trajectories as unknown[]).length, 2);
});

test('play stores each seed\'s group with the ids of its episodes', async () => {
  const dir = scratchDir();
  const r = runCli(['play', '--env', 'blackjack', '--policy', 'random', '--episodes', '60', '--group-size', '3', '--seed', '5', '--json'], dir);
  assert.equal(r.code, 0, r.stderr);
  const store = await openStore(join(dir, '.spindle', 'spindle.db'));
  try {
    const groups = (await store.listGroups(r.json().run as string, { limit: 1000 })).items;
    const trajectories = (await store.listTrajectories(r.json().run as string, { limit: 1000 })).items;
    assert.equal(trajectories.length, 60);
    assert.deepEqual(groups.map((g) => g.seed).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => 5 + i));
    for (const g of groups) {
      const members = trajectories.filter((t) => t.groupId === g.id).sort((a, b) => a.sample - b.sample);
      assert.deepEqual(g.trajectoryIds, members.map((t) => t.id), `seed ${g.seed}`);
      assert.ok(members.every((t) => t.seed === g.seed));
    }
  } finally {
    await store.close();
  }
});

test('play --save-trajectories N stores the groups of the first N episodes, naming only those', async () => {
  const dir = scratchDir();
  const r = runCli(['play', '--env', 'blackjack', '--policy', 'random', '--episodes', '60', '--group-size', '3', '--seed', '5', '--save-trajectories', '10', '--json'], dir);
  assert.equal(r.code, 0, r.stderr);
  const store = await openStore(join(dir, '.spindle', 'spindle.db'));
  try {
    const groups = (await store.listGroups(r.json().run as string, { limit: 1000 })).items;
    const trajectories = (await store.listTrajectories(r.json().run as string, { limit: 1000 })).items;
    assert.equal(trajectories.length, 10);
    const stored = new Set(trajectories.map((t) => t.id));
    const named = groups.flatMap((g) => g.trajectoryIds);
    assert.deepEqual([...named].sort(), [...stored].sort(), 'every stored episode is in one group, and no group names an unstored one');
    assert.ok(groups.length >= 4 && groups.length < 20, `${groups.length} groups`);
  } finally {
    await store.close();
  }
});

test('bad input exits 2 with a message naming the flag, and writes nothing', () => {
  const dir = scratchDir();
  const cases: [string[], RegExp][] = [
    [['play', '--env', 'chess', '--policy', 'random'], /--env: unknown env 'chess'/],
    [['play', '--env', 'blackjack', '--policy', 'stick-at-40'], /--policy/],
    [['play', '--env', 'nim', '--policy', 'always-stick'], /blackjack only/],
    [['play', '--env', 'blackjack', '--policy', 'random', '--episodes', '-3'], /--episodes/],
    [['play', '--env', 'blackjack', '--policy', 'random', '--seed', 'x'], /--seed/],
    [['play', '--env', 'blackjack', '--policy', 'random', '--env-opt', 'sab=maybe'], /sab/],
    [['play', '--env', 'blackjack', '--policy', 'random', '--env-opt', 'decks=6'], /decks/],
    [['play', '--env', BAD_ENV, '--policy', 'random'], /kind/],
    [['play', '--env', './missing-env.ts', '--policy', 'random'], /no such file/],
    [['play', '--env', 'blackjack', '--policy', 'random', '--no-such-flag'], /unknown option/],
  ];
  for (const [args, message] of cases) {
    const r = runCli(args, dir);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
  assert.equal(existsSync(join(dir, '.spindle')), false, 'a rejected command must not create the database');
});

test('a user env module runs like a built-in one', () => {
  const dir = scratchDir();
  const r = runCli(['play', '--env', EXAMPLE, '--policy', 'oracle', '--episodes', '200', '--env-opt', 'max=64', '--json'], dir);
  assert.equal(r.code, 0, r.stderr);
  const out = r.json();
  assert.equal(out.env, 'guess-number');
  // Binary search over 1..64 always finds the number within 7 guesses.
  assert.equal(out.winRate, 1);
  assert.ok((out.meanTurns as number) <= 7);
  const random = runCli(['play', '--env', EXAMPLE, '--policy', 'random', '--episodes', '200', '--json'], dir).json();
  assert.ok((random.winRate as number) < 0.6);
});

test('show of an unknown run is refused with exit 2', () => {
  const dir = scratchDir();
  assert.equal(runCli(['play', '--env', 'bandit', '--policy', 'random', '--episodes', '5'], dir).code, 0);
  const r = runCli(['show', 'run_nope'], dir);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no run 'run_nope'/);
});
