/** The `spindle` command: a thin layer over the library's functions. */
import { Command, CommanderError } from 'commander';
import { UsageError } from '../core/errors.ts';
import { registerCommands } from './commands/index.ts';

const program = new Command()
  .name('spindle')
  .description('Reinforcement learning for LLM agents in multi-turn environments')
  .showHelpAfterError()
  .exitOverride();

registerCommands(program);

// `spindle runs | head`: a closed pipe ends the output, not the process with a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // Help and version exit 0; any other commander error is a usage error.
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else if (err instanceof UsageError) {
    process.stderr.write(`spindle: ${err.message}\n`);
    process.exitCode = 2;
  } else {
    // Set SPINDLE_DEBUG=1 for the stack trace.
    const detail = process.env.SPINDLE_DEBUG ? (err as Error)?.stack : (err as Error)?.message;
    process.stderr.write(`spindle: error: ${detail ?? String(err)}\n`);
    process.exitCode = 1;
  }
}
