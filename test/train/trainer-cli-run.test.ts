/**
 * `spindle train` end to end through the real bin, on a tiny model: the --json summary's documented
 * fields, the run folder's report and learning curve, the stored run, --resume to more steps, and
 * the run's checkpoint as a policy of `spindle eval`.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, scratchDir } from '../cli/run-cli.ts';
import { TINY_TRAIN_CONFIG } from '../fixtures/tiny-train-config.ts';

test('spindle train --json: the summary, the run folder, resume and the checkpoint as a policy', () => {
  const dir = scratchDir();
  writeFileSync(join(dir, 'tiny.json'), JSON.stringify(TINY_TRAIN_CONFIG));
  const r = runCli(['train', '--env', 'blackjack', '--config', 'tiny.json', '--seed', '5', '--json'], dir);
  assert.equal(r.code, 0, r.stderr.slice(-3000));
  const out = r.json();
  assert.equal(out.env, 'blackjack');
  assert.equal(out.steps, 3);
  assert.equal(out.episodes, 3 * 4 * 2);
  assert.ok((out.wallSeconds as number) > 0);
  const evalResult = out.eval as Record<string, unknown>;
  for (const key of ['meanReturn', 'ci95', 'exactReturn', 'winRate', 'invalidRate']) assert.ok(key in evalResult, `eval.${key}`);
  // Blackjack's exact value of an LLM policy is its greedy table's: a return in [−1, 1].
  assert.ok(Math.abs(evalResult.exactReturn as number) <= 1 + 1e-9);
  const baselines = out.baselines as Record<string, number>;
  assert.deepEqual(Object.keys(baselines).sort(), ['always-stick', 'oracle', 'random', 'stick-at-17', 'warm-start']);
  assert.ok(Math.abs((out.optimalReturn as number) + 0.0466) < 5e-4);
  // The progress line went to stderr, with its ETA; stdout's last line is the JSON.
  assert.match(r.stderr, /step 1\/3 reward -?\d\.\d{3} win \d+\.\d% KL .* ETA \d+s/);
  assert.match(r.stderr, /eval at step 2: greedy return/);

  const runId = out.run as string;
  const folder = join(dir, '.spindle', 'runs', runId);
  assert.ok(existsSync(out.report as string) && (out.report as string).startsWith(folder));
  assert.match(readFileSync(out.report as string, 'utf8'), /random/);
  assert.match(readFileSync(out.learningCurve as string, 'utf8'), /^<svg/);

  const runs = runCli(['runs', '--json'], dir);
  assert.equal(runs.code, 0, runs.stderr);
  assert.ok(JSON.stringify(runs.json()).includes(runId));

  // --resume continues from the last checkpoint (step 3) to step 4.
  const resumed = runCli(['train', '--resume', runId, '--steps', '4', '--json'], dir);
  assert.equal(resumed.code, 0, resumed.stderr.slice(-3000));
  assert.equal(resumed.json().run, runId);
  assert.equal(resumed.json().steps, 4);
  assert.match(resumed.stderr, /step 4\/4/);
  assert.doesNotMatch(resumed.stderr, /step [1-3]\/4/);

  const evaluated = runCli(['eval', '--env', 'blackjack', '--policy', `run:${runId}`, '--policy', 'random', '--episodes', '40', '--seed', '3', '--json'], dir);
  assert.equal(evaluated.code, 0, evaluated.stderr.slice(-3000));
  assert.match(JSON.stringify(evaluated.json()), new RegExp(`run:${runId}`));
});
