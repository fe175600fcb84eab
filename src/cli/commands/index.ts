/** Registers every `spindle` subcommand. */
import type { Command } from 'commander';
import { collect, intFlag, numberFlag } from '../args.ts';
import { envsCommand } from './envs.ts';
import { playCommand } from './play.ts';
import { runsCommand, showCommand } from './runs.ts';

const DB_HELP = 'SQLite database (default .spindle/spindle.db)';

export function registerCommands(program: Command): void {
  program
    .command('envs')
    .description('list the built-in environments')
    .option('--json', 'print one JSON object as the last line')
    .action((opts) => envsCommand(opts));

  program
    .command('play')
    .description('play episodes of an env with a policy and report the results')
    .requiredOption('--env <name|path>', 'built-in env name or a path to a module exporting an EnvSpec')
    .requiredOption('--policy <name>', 'random, oracle, stick-at-N, always-stick, model:DIR, ...')
    .option('--episodes <n>', 'episodes to play', intFlag('--episodes', 1, 100_000_000), 1000)
    .option('--seed <s>', 'first seed; episodes use seeds s, s+1, ...', intFlag('--seed', 0, 2 ** 32 - 1), 0)
    .option('--env-opt <key=value>', 'env option (repeatable)', collect, [])
    .option('--group-size <g>', 'samples per seed', intFlag('--group-size', 1, 1024), 1)
    .option('--concurrency <n>', 'episodes in flight at once', intFlag('--concurrency', 1, 4096), 64)
    .option('--max-turns <n>', 'decisions per episode before it is truncated', intFlag('--max-turns', 1, 100_000))
    .option('--max-tokens <n>', 'max new tokens per LLM call', intFlag('--max-tokens', 1, 1_000_000))
    .option('--temperature <t>', 'sampling temperature for LLM policies', numberFlag('--temperature', 0, 10))
    .option('--save-trajectories <all|none|N>', 'which trajectories to store', 'all')
    .option('--db <path>', DB_HELP)
    .option('--json', 'print one JSON object as the last line')
    .action((opts) => playCommand(opts));

  program
    .command('runs')
    .description('list stored runs, newest first')
    .option('--limit <n>', 'at most this many', intFlag('--limit', 1, 1000), 50)
    .option('--db <path>', DB_HELP)
    .option('--json', 'print one JSON object as the last line')
    .action((opts) => runsCommand(opts));

  program
    .command('show')
    .description('show one run: config, summary, metrics, checkpoints and sample trajectories')
    .argument('<run>', 'run id')
    .option('--trajectories <n>', 'sample trajectories to print', intFlag('--trajectories', 0, 1000), 3)
    .option('--db <path>', DB_HELP)
    .option('--json', 'print one JSON object as the last line')
    .action((run, opts) => showCommand(run, opts));
}
