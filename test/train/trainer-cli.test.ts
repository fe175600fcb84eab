/** `spindle train` refuses bad input with exit 2 and a message naming the flag or field, writing nothing. */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, scratchDir } from '../cli/run-cli.ts';

test('bad config fields, flags and resume targets exit 2 with a message, nothing written', () => {
  const dir = scratchDir();
  writeFileSync(join(dir, 'bad.json'), JSON.stringify({ warmStart: { maxSteps: -3 } }));
  writeFileSync(join(dir, 'broken.json'), '{ steps: ');
  const cases: [string[], RegExp][] = [
    [['train', '--env', 'blackjack', '--config', 'bad.json'], /train\.warmStart\.maxSteps/],
    [['train', '--env', 'blackjack', '--config', 'broken.json'], /--config broken\.json: not valid JSON/],
    [['train', '--env', 'blackjack', '--config', 'missing.json'], /--config missing\.json: no such file/],
    [['train', '--env', 'blackjack', '--group-size', '0'], /--group-size/],
    [['train', '--env', 'blackjack', '--env-opt', 'sab=maybe'], /sab/],
    [['train', '--env', 'no-such-env'], /no-such-env/],
    [['train'], /--env is required/],
    [['train', '--resume', 'run_0123456789abcdef', '--lr', '0.1'], /only --steps and --threads/],
    [['train', '--resume', 'run_0123456789abcdef'], /no database/],
    [['train', '--resume', 'run_0123456789abcdef', '--warm-start', 'run_0123456789abcdef'], /only --steps and --threads may be given \(not --warm-start\)/],
    [['train', '--env', 'blackjack', '--warm-start', 'run_0123456789abcdef'], /--warm-start run_0123456789abcdef: there is no database/],
    [['train', '--env', 'blackjack', '--init-from', 'run_0123456789abcdef'], /--init-from run_0123456789abcdef: give a train run's checkpoint as run:RUN\[@STEP\]/],
    [['train', '--env', 'blackjack', '--init-from', 'run:run_0123456789abcdef@x'], /--init-from run:run_0123456789abcdef@x: STEP must be a non-negative integer/],
    [['train', '--env', 'blackjack', '--init-from', 'run:run_0123456789abcdef@3'], /--init-from run_0123456789abcdef: there is no database/],
    [['train', '--env', 'blackjack', '--init-from', 'run:run_0123456789abcdef', '--warm-start', 'run_0123456789abcdef'], /--warm-start and --init-from .* give one/],
    [['train', '--resume', 'run_0123456789abcdef', '--init-from', 'run:run_0123456789abcdef'], /\(not --init-from\)/],
  ];
  for (const [args, message] of cases) {
    const r = runCli([...args, '--db', 'db.sqlite'], dir);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
  assert.ok(!existsSync(join(dir, 'db.sqlite')), 'no database was created');
  assert.ok(!existsSync(join(dir, '.spindle')), 'no run folder was created');
});
