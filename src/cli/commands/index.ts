/** Registers every `spindle` subcommand. */
import type { Command } from 'commander';
import { collect, intFlag, numberFlag } from '../args.ts';
import { envsCommand } from './envs.ts';
import { evalCommand } from './eval.ts';
import { exportCommand } from './export.ts';
import { playCommand } from './play.ts';
import { runsCommand, showCommand } from './runs.ts';
// `--policy model:DIR` and `run:RUN[@STEP]`: these only register the names; nothing loads until one is used.
import '../../policy/embedded-register.ts';
import '../../policy/run-checkpoint-register.ts';

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

  program
    .command('eval')
    .description('evaluate policies on the same seeds: returns, exact values, the oracle, head-to-head rates')
    .requiredOption('--env <name|path>', 'built-in env name or a path to a module exporting an EnvSpec')
    .option('--policy <name>', 'a policy to evaluate (repeatable): random, oracle, stick-at-N, model:DIR, run:RUN[@STEP], ...', collect, [])
    .option('--episodes <n>', 'episodes per policy, one per seed', intFlag('--episodes', 1, 100_000_000), 1000)
    .option('--seed <s>', 'first seed; episodes use seeds s, s+1, ...', intFlag('--seed', 0, 2 ** 32 - 1), 0)
    .option('--env-opt <key=value>', 'env option (repeatable)', collect, [])
    .option('--temperature <t>', 'sampling temperature for LLM policies (0 = greedy)', numberFlag('--temperature', 0, 10), 0)
    .option('--max-turns <n>', 'decisions per episode before it is truncated', intFlag('--max-turns', 1, 100_000))
    .option('--max-tokens <n>', 'max new tokens per LLM call', intFlag('--max-tokens', 1, 1_000_000))
    .option('--concurrency <n>', 'episodes in flight at once', intFlag('--concurrency', 1, 4096), 64)
    .option('--threads <n>', 'engine threads for LLM policies (default: all cores)', intFlag('--threads', 1, 1024))
    .option('--save-trajectories <all|none|N>', 'which trajectories to store', 'all')
    .option('--db <path>', DB_HELP)
    .option('--json', 'print one JSON object as the last line')
    .action((opts) => evalCommand(opts));

  program
    .command('export')
    .description('write a checkpoint as a Hugging Face model folder (config, safetensors, tokenizer, chat template)')
    .argument('<source>', 'run:RUN[@STEP] (latest step by default) or model:DIR')
    .requiredOption('--out <dir>', 'folder to write')
    .option('--merge-lora', 'merge a LoRA adapter into the weights (default: base + PEFT adapter in DIR/adapter/)')
    .option('--dtype <f32|bf16>', 'storage dtype of the weights', 'f32')
    .option('--force', 'replace a non-empty --out folder')
    .option('--db <path>', DB_HELP)
    .option('--json', 'print one JSON object as the last line')
    .action((source, opts) => exportCommand(source, opts));
}
