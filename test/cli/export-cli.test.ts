/** `spindle export` from the command line: run:RUN[@STEP], --merge-lora, --force, and bad input (exit 2 naming the flag). */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { storeWithRun } from '../eval/run-store.ts';
import { saveTinyLoraModel, tinyLoraAdapters, tinyModel } from '../eval/tiny-checkpoint.ts';
import { runCli } from './run-cli.ts';

test('export run:RUN writes the latest checkpoint; --force replaces a folder; bad input exits 2 naming the field', async () => {
  const model = tinyModel(21);
  const run = await storeWithRun([3, 6], (dir) => saveTinyLoraModel(dir, model, tinyLoraAdapters(model.cfg, 22)));
  const out = join(run.root, 'export');
  const cli = (...args: string[]) => runCli(['export', ...args, '--db', run.db], run.root);

  const first = cli(`run:${run.runId}`, '--out', out, '--json');
  assert.equal(first.code, 0, first.stderr);
  const result = first.json();
  assert.equal(result.source, `run:${run.runId}@6`);
  assert.equal(result.sourceDir, run.dirs[6]);
  assert.equal(result.adapter, 'separate');
  assert.equal(result.dtype, 'f32');
  assert.ok(existsSync(join(out, 'adapter', 'adapter_config.json')));

  // A non-empty folder is refused, and left as it was.
  const refused = cli(`run:${run.runId}@3`, '--out', out, '--merge-lora');
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /--out: .*export is not empty \(\d+ entries\); pass --force to replace it/);
  assert.ok(existsSync(join(out, 'adapter')));

  // --force replaces it whole: the merged model has no adapter/ left over from the earlier export.
  const forced = cli(`run:${run.runId}@3`, '--out', out, '--merge-lora', '--force', '--dtype', 'bf16', '--json');
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(forced.json().adapter, 'merged');
  assert.equal(existsSync(join(out, 'adapter')), false);
  assert.deepEqual(readdirSync(dirname(out)).filter((name) => name.includes('.export-')), [], 'no staging folder is left behind');

  const empty = join(run.root, 'empty');
  mkdirSync(empty);
  const cases: [string[], RegExp][] = [
    [[`run:${run.runId}@4`, '--out', empty], /SOURCE run:run_test0001@4: run 'run_test0001' has no checkpoint at step 4; available steps: 3, 6/],
    [[`${run.dirs[6]}`, '--out', empty], /SOURCE: expected run:RUN\[@STEP\] or model:DIR/],
    [[`run:${run.runId}`, '--out', empty, '--dtype', 'f16'], /--dtype: expected one of f32, bf16, got "f16"/],
    [[`run:${run.runId}`], /required option '--out <dir>'/],
  ];
  for (const [args, message] of cases) {
    const r = cli(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
  assert.deepEqual(readdirSync(empty), [], 'a refused export writes nothing');
  assert.ok(existsSync(run.dirs[6]), 'the source is untouched');
});
