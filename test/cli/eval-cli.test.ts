/** `spindle eval` from the command line: scripted and LLM policies, the stored run, and bad input. */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { saveTinyModel, tinyModel } from '../eval/tiny-checkpoint.ts';
import { runCli, runCliInterrupted, scratchDir } from './run-cli.ts';

type PolicyResult = Record<string, unknown> & { policy: string; ci95: [number, number] };

test('eval stopped by SIGINT: the run is failed with the signal and keeps the trajectories played so far', async () => {
  const dir = scratchDir();
  const stopped = await runCliInterrupted(['eval', '--env', 'blackjack', '--policy', 'random', '--episodes', '100000', '--json'], dir, /random [1-9]\d*\/100000 /);
  assert.equal(stopped.code, 130, stopped.stderr.slice(-2000));
  const runId = /run (run_\w+) interrupted by SIGINT; recorded as failed\n/.exec(stopped.stderr)?.[1];
  assert.ok(runId, stopped.stderr.slice(-2000));
  const shown = runCli(['show', runId, '--trajectories', '5', '--json'], dir).json();
  const run = shown.run as { status: string; summary: { error: string; signal: string; savedTrajectories: number } };
  assert.equal(run.status, 'failed');
  assert.deepEqual([run.summary.error, run.summary.signal], ['interrupted by SIGINT', 'SIGINT']);
  assert.ok(run.summary.savedTrajectories > 0);
  assert.equal((shown.trajectories as unknown[]).length, Math.min(5, run.summary.savedTrajectories));
});

test('eval of scripted policies on blackjack: exact values, the oracle, head-to-head, an eval run in the store', () => {
  const dir = scratchDir();
  const r = runCli(['eval', '--env', 'blackjack', '--policy', 'oracle', '--policy', 'random', '--policy', 'stick-at-17', '--episodes', '2000', '--seed', '5', '--json'], dir);
  assert.equal(r.code, 0, r.stderr);
  const out = r.json();
  assert.equal(out.env, 'blackjack');
  assert.equal(out.episodes, 2000);
  assert.equal(out.temperature, 0);
  assert.ok(Math.abs((out.optimalReturn as number) + 0.0466) < 5e-4);
  const policies = out.policies as PolicyResult[];
  assert.deepEqual(
    policies.map((p) => p.policy),
    ['oracle', 'random', 'stick-at-17'],
  );
  const exact = Object.fromEntries(policies.map((p) => [p.policy, p.exactReturn as number]));
  assert.ok(Math.abs(exact.oracle + 0.0466) < 5e-4 && Math.abs(exact.random + 0.396) < 1e-3 && Math.abs(exact['stick-at-17'] + 0.079) < 1e-3);
  for (const p of policies) {
    for (const key of ['meanReturn', 'ci95', 'winRate', 'drawRate', 'lossRate', 'invalidRate', 'exactReturn', 'exactSource', 'greedyTable']) assert.ok(key in p, `${p.policy}: ${key}`);
  }
  const h2h = out.headToHead as Record<string, Record<string, number>>;
  assert.ok(h2h.oracle.random > 0.5);
  assert.ok(Math.abs(h2h.oracle.random + h2h.random.oracle - 1) < 1e-12);
  assert.ok(Math.abs(h2h['stick-at-17'].random + h2h.random['stick-at-17'] - 1) < 1e-12);

  const runs = runCli(['runs', '--json'], dir).json().runs as { id: string; kind: string; status: string; policy: string }[];
  assert.equal(runs.length, 1);
  assert.deepEqual([runs[0].id, runs[0].kind, runs[0].status], [out.run, 'eval', 'finished']);
  assert.equal(out.savedTrajectories, 6000);
});

test('eval of an LLM policy from a tiny random checkpoint: sampled figures and its greedy table, beside random', () => {
  const dir = scratchDir();
  const model = join(dir, 'tiny');
  saveTinyModel(model, tinyModel(31));
  const r = runCli(
    ['eval', '--env', 'blackjack', '--policy', `model:${model}`, '--policy', 'random', '--episodes', '12', '--max-tokens', '8', '--threads', '1', '--save-trajectories', 'none', '--json'],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  const out = r.json();
  const [llm, random] = out.policies as PolicyResult[];
  assert.equal(llm.policy, `model:${model}`);
  assert.equal(llm.finished, 12);
  assert.ok((llm.invalidRate as number) >= 0 && (llm.invalidRate as number) <= 1);
  assert.equal(llm.exactSource, 'greedy-table');
  const table = llm.greedyTable as Record<string, unknown> & { agreement: { checked: boolean; agrees: boolean; message: string } };
  assert.equal(table.states, 280);
  assert.equal(typeof table.invalidRate, 'number');
  assert.ok((table.invalidRate as number) >= 0 && (table.invalidRate as number) <= 1);
  assert.equal(table.invalidRate, (table.invalidStates as number) / 280);
  assert.equal(llm.exactReturn, table.exactReturn);
  // (A sum over states: within float rounding of [-1, 1].)
  assert.ok((table.exactReturn as number) >= -1 - 1e-9 && (table.exactReturn as number) <= 1 + 1e-9);
  assert.equal(table.agreement.checked, true);
  assert.equal(typeof table.agreement.agrees, 'boolean');
  assert.equal(Object.keys(table.moves as object).length, 280);
  assert.equal(random.greedyTable, null);
  const h2h = out.headToHead as Record<string, Record<string, number>>;
  assert.ok(Math.abs(h2h[llm.policy].random + h2h.random[llm.policy] - 1) < 1e-12);

});

test('bad input exits 2 with a message naming the flag, and writes nothing', () => {
  const dir = scratchDir();
  const eval_ = (...args: string[]) => ['eval', '--env', 'blackjack', ...args];
  const cases: [string[], RegExp][] = [
    [eval_(), /--policy: give at least one policy/],
    [eval_('--policy', 'random', '--policy', 'random'), /--policy: 'random' is given twice/],
    [eval_('--policy', 'oracle', '--policy', 'stick-at-99'), /--policy "stick-at-99"/],
    [eval_('--policy', 'random', '--episodes', '0'), /--episodes: expected an integer/],
    [eval_('--policy', 'random', '--temperature', '-1'), /--temperature: expected a number/],
    [eval_('--policy', 'random', '--threads', '0'), /--threads: expected an integer/],
    [eval_('--policy', 'random', '--env-opt', 'sab=maybe'), /sab/],
    [eval_('--policy', 'random', '--save-trajectories', 'some'), /--save-trajectories: expected all, none or a count/],
    [eval_('--policy', 'model:'), /--policy model:DIR needs a checkpoint folder/],
    [eval_('--policy', 'run:run_none'), /--policy run:run_none: there is no database/],
    [['eval', '--env', 'chess', '--policy', 'random'], /--env: unknown env 'chess'/],
  ];
  for (const [args, message] of cases) {
    const r = runCli(args, dir);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
  assert.equal(existsSync(join(dir, '.spindle')), false, 'a rejected command must not create the database');
});
