/**
 * The command-line wiring of offline training (from-store-register.ts) on a real commander program:
 * `train` dispatches on --from-store, flags of the other mode are refused, and the new commands
 * validate their flags before touching anything.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { addFromStoreTrainOptions, registerFromStoreCommands, trainOrFromStore } from '../../src/cli/commands/from-store-register.ts';
import { UsageError } from '../../src/core/errors.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

function program(online: (opts: Record<string, unknown>) => void): Command {
  const p = new Command().exitOverride();
  addFromStoreTrainOptions(p.command('train').option('--env <name>').option('--steps <n>').option('--db <path>')).action((opts: Record<string, unknown>) =>
    trainOrFromStore(opts, online),
  );
  registerFromStoreCommands(p);
  return p;
}

const missingDb = join(tempDir('spindle-offline-cli-'), 'none.db');

async function usageError(args: string[], pattern: RegExp): Promise<void> {
  await assert.rejects(program(() => assert.fail('the online trainer must not run')).parseAsync(args, { from: 'user' }), (e: unknown) => e instanceof UsageError && pattern.test(e.message));
}

describe('train --from-store on the command line', () => {
  it('runs the online trainer without --from-store', async () => {
    const seen: Record<string, unknown>[] = [];
    await program((opts) => void seen.push(opts)).parseAsync(['train', '--env', 'blackjack', '--steps', '3'], { from: 'user' });
    assert.equal(seen.length, 1);
    assert.equal(seen[0].env, 'blackjack');
  });

  it('refuses offline flags without --from-store and online flags with it', async () => {
    await usageError(['train', '--env', 'blackjack', '--model', 'dir'], /--model: only with --from-store/);
    await usageError(['train', '--from-store', 'run_a', '--model', 'dir', '--env', 'blackjack'], /--env is for training on an env/);
  });

  it('dispatches --from-store to the offline trainer, which checks its inputs first', async () => {
    await usageError(['train', '--from-store', 'run_a', '--db', missingDb], /--model: give the model to train/);
    await usageError(['train', '--from-store', 'run_a', '--model', 'dir', '--db', missingDb], /no database at/);
    await usageError(['train-offline', 'bad id!', '--model', 'dir', '--db', missingDb], /--from-store: 'bad id!' is not a run id/);
  });

  it('export-samples validates the format and the database', async () => {
    await usageError(['export-samples', '--from-store', 'run_a', '--out', 'x.jsonl', '--format', 'csv', '--db', missingDb], /--format: expected one of atropos, jsonl/);
    await usageError(['export-samples', '--from-store', 'run_a', '--out', 'x.jsonl', '--db', missingDb], /no database at/);
  });
});
