/**
 * `spindle train` stopped by Ctrl-C (SIGINT) through the real bin: the run is stored as failed with
 * the signal and its latest checkpoint, stderr says how to continue (`--resume`, or, when only the
 * final evaluation was left, the trained policy's name), and `--resume` from there finishes the run.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, runCliInterrupted, scratchDir } from '../cli/run-cli.ts';
import { TINY_TRAIN_CONFIG } from '../fixtures/tiny-train-config.ts';

// 50 steps, so the run is still training when it is stopped; a checkpoint every step.
const CONFIG = { ...TINY_TRAIN_CONFIG, steps: 50, batchSeeds: 2, evalEvery: 50, evalEpisodes: 8, finalEvalEpisodes: 8, checkpointEvery: 1 };

test('spindle train stopped by SIGINT: stored as failed with its latest checkpoint, then resumed to the end', async () => {
  const dir = scratchDir();
  writeFileSync(join(dir, 'tiny.json'), JSON.stringify(CONFIG));
  // The step line is throttled: any step past the first.
  const stopped = await runCliInterrupted(['train', '--env', 'blackjack', '--config', 'tiny.json', '--seed', '2'], dir, /step ([2-9]|[1-4]\d)\/50/);
  assert.equal(stopped.code, 130, stopped.stderr.slice(-3000));
  const said = /run (run_\w+) interrupted by SIGINT; recorded as failed\n {2}its latest checkpoint is step (\d+): continue with spindle train --resume (run_\w+)\n/.exec(stopped.stderr);
  assert.ok(said, stopped.stderr.slice(-2000));
  const [, runId, stepText, resumeId] = said;
  assert.equal(resumeId, runId);
  const checkpointStep = Number(stepText);
  assert.ok(checkpointStep >= 2 && checkpointStep < 50, `checkpoint step ${checkpointStep}`);

  const shown = runCli(['show', runId, '--json'], dir);
  assert.equal(shown.code, 0, shown.stderr);
  const run = (shown.json().run ?? {}) as Record<string, unknown>;
  assert.equal(run.status, 'failed');
  assert.ok(typeof run.finishedAt === 'string');
  assert.deepEqual(run.summary, { error: 'interrupted by SIGINT', signal: 'SIGINT', lastCheckpointStep: checkpointStep });

  const resumed = runCli(['train', '--resume', runId, '--steps', String(checkpointStep + 1), '--json'], dir);
  assert.equal(resumed.code, 0, resumed.stderr.slice(-3000));
  assert.equal(resumed.json().steps, checkpointStep + 1);
  const after = runCli(['show', runId, '--json'], dir).json().run as Record<string, unknown>;
  assert.equal(after.status, 'finished');
  assert.equal((after.summary as Record<string, unknown>).steps, checkpointStep + 1);
  assert.equal((after.summary as Record<string, unknown>).error, undefined);
});

test('spindle train stopped in its final evaluation: the hint loads the trained policy instead of resuming', async () => {
  const dir = scratchDir();
  writeFileSync(join(dir, 'tiny.json'), JSON.stringify({ ...TINY_TRAIN_CONFIG, steps: 2, checkpointEvery: 2, finalEvalEpisodes: 5000 }));
  const stopped = await runCliInterrupted(['train', '--env', 'blackjack', '--env-opt', 'sab=true', '--config', 'tiny.json', '--seed', '2'], dir, /\[final\] evaluating on 5000/);
  assert.equal(stopped.code, 130, stopped.stderr.slice(-3000));
  const said = /run (run_\w+) interrupted by SIGINT; recorded as failed\n {2}it had trained all 2 steps: its policy loads as run:(run_\w+) \(spindle eval --env blackjack --env-opt sab=true --policy run:run_\w+\)\n/.exec(stopped.stderr);
  assert.ok(said, stopped.stderr.slice(-2000));
  assert.equal(said[2], said[1]);
  const run = runCli(['show', said[1], '--json'], dir).json().run as Record<string, unknown>;
  assert.deepEqual([run.status, run.summary], ['failed', { error: 'interrupted by SIGINT', signal: 'SIGINT', lastCheckpointStep: 2 }]);
});
