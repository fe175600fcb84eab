/** Registers every `spindle` subcommand. */
import type { Command } from 'commander';
import { collect, intFlag, numberFlag } from '../args.ts';
import { envsCommand } from './envs.ts';
import { evalCommand } from './eval.ts';
import { exportCommand } from './export.ts';
import { playCommand } from './play.ts';
import { runsCommand, showCommand } from './runs.ts';
import { trainCommand } from './train.ts';
// `--policy model:DIR` and `run:RUN[@STEP]`: these only register the names; nothing loads until one is used.
import '../../policy/embedded-register.ts';
import '../../policy/run-checkpoint-register.ts';
import '../../policy/openai-register.ts';
import { addFromStoreTrainOptions, registerFromStoreCommands, trainOrFromStore } from './from-store-register.ts';

const DB_HELP = 'SQLite database (default .spindle/spindle.db)';
const BASE_URL_HELP = 'base URL of an OpenAI-compatible server, for --policy openai:MODEL (default OPENAI_BASE_URL)';
const API_KEY_HELP = 'API key for --policy openai:MODEL (default OPENAI_API_KEY)';
const JUDGE_HELP = 'an LLM judge (openai:MODEL, model:DIR, run:RUN[@STEP]) that scores each group relative to each other, added as reward part "judge"';
const JUDGE_RUBRIC_HELP = 'a text file with the rubric the judge scores by (default: goal achieved, then efficiency)';
const JUDGE_WEIGHT_HELP = 'weight of the judge part in the total reward (default 1)';
const TOKENIZER_HELP = 'model folder (tokenizer.json, tokenizer_config.json with its chat template) that re-tokenises answers of an --policy openai:MODEL server that reports no token ids (marked approximate)';

/** The flags play and eval share: the env, the seeds, episode limits, storage, a remote policy's endpoint. */
function withEpisodeOptions(command: Command, episodesHelp: string): Command {
  return command
    .requiredOption('--env <name|path>', 'built-in env name or a path to a module exporting an EnvSpec')
    .option('--episodes <n>', episodesHelp, intFlag('--episodes', 1, 100_000_000), 1000)
    .option('--seed <s>', 'first seed; episodes use seeds s, s+1, ...', intFlag('--seed', 0, 2 ** 32 - 1), 0)
    .option('--env-opt <key=value>', 'env option (repeatable)', collect, [])
    .option('--concurrency <n>', 'episodes in flight at once', intFlag('--concurrency', 1, 4096), 64)
    .option('--max-turns <n>', 'decisions per episode before it is truncated', intFlag('--max-turns', 1, 100_000))
    .option('--max-tokens <n>', "max new tokens per LLM call (default: a trained checkpoint's own answer budget, else 512)", intFlag('--max-tokens', 1, 1_000_000))
    .option('--save-trajectories <all|none|N>', 'which trajectories to store', 'all')
    .option('--base-url <url>', BASE_URL_HELP)
    .option('--api-key <key>', API_KEY_HELP)
    .option('--tokenizer <dir>', TOKENIZER_HELP)
    .option('--db <path>', DB_HELP)
    .option('--json', 'print one JSON object as the last line');
}

export function registerCommands(program: Command): void {
  program
    .command('envs')
    .description('list the built-in environments')
    .option('--json', 'print one JSON object as the last line')
    .action((opts) => envsCommand(opts));

  withEpisodeOptions(
    program
      .command('play')
      .description('play episodes of an env with a policy and report the results')
      .requiredOption('--policy <name>', 'random, oracle, stick-at-N, always-stick, model:DIR, ...'),
    'episodes to play',
  )
    .option('--group-size <g>', 'samples per seed', intFlag('--group-size', 1, 1024), 1)
    .option('--temperature <t>', 'sampling temperature for LLM policies', numberFlag('--temperature', 0, 10))
    .option('--judge <policy>', JUDGE_HELP)
    .option('--judge-rubric <file>', JUDGE_RUBRIC_HELP)
    .option('--judge-weight <w>', JUDGE_WEIGHT_HELP, numberFlag('--judge-weight', -1e6, 1e6))
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

  withEpisodeOptions(
    program
      .command('eval')
      .description('evaluate policies on the same seeds: returns, exact values, the oracle, head-to-head rates')
      .option('--policy <name>', 'a policy to evaluate (repeatable): random, oracle, stick-at-N, model:DIR, run:RUN[@STEP], ...', collect, []),
    'episodes per policy, one per seed',
  )
    .option('--temperature <t>', 'sampling temperature for LLM policies (0 = greedy)', numberFlag('--temperature', 0, 10), 0)
    .option('--threads <n>', 'engine threads for LLM policies (default: all cores)', intFlag('--threads', 1, 1024))
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

  program
    .command('serve')
    .description('serve a model over an OpenAI-compatible HTTP API (/v1/chat/completions, /v1/models)')
    .option('--model <DIR|run:RUN[@STEP]>', 'checkpoint folder or run checkpoint (default: the newest checkpoint in the store, else a fresh default model)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: a free port)', intFlag('--port', 0, 65_535), 8321)
    .option('--threads <n>', 'engine threads (default: all cores)', intFlag('--threads', 1, 1024))
    .option('--body-limit <bytes>', 'largest request body accepted', intFlag('--body-limit', 1024, 1_073_741_824))
    .option('--reload-every <s>', 'with run:RUN, load a newer checkpoint of the run every s seconds (default: only on POST /admin/reload)', intFlag('--reload-every', 1, 86_400))
    .option('--db <path>', DB_HELP)
    .action(async (opts) => (await import('./serve.ts')).serveCommand(opts));

  program
    .command('proxy')
    .description('an OpenAI-compatible endpoint that forwards to --upstream and records every call as trajectories')
    .requiredOption('--upstream <url>', "the upstream's OpenAI base URL, /v1 included (e.g. http://127.0.0.1:8000/v1)")
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <n>', 'port to listen on (0: any free port)', intFlag('--port', 0, 65535), 8322)
    .option('--run <name>', 'the proxy run to record into (default: a new id)')
    .option('--body-limit <bytes>', 'largest request body accepted', intFlag('--body-limit', 1024, 2 ** 31 - 1))
    .option('--request-token-ids', 'ask the upstream for token ids and logprobs (vLLM return_token_ids) when the agent did not')
    .option('--judge <policy>', `${JUDGE_HELP}; enables POST /groups/TASK/judge`)
    .option('--judge-rubric <file>', JUDGE_RUBRIC_HELP)
    .option('--judge-weight <w>', JUDGE_WEIGHT_HELP, numberFlag('--judge-weight', -1e6, 1e6))
    .option('--base-url <url>', `base URL of the judge's server, for --judge openai:MODEL (default OPENAI_BASE_URL)`)
    .option('--api-key <key>', `API key for --judge openai:MODEL (default OPENAI_API_KEY)`)
    .option('--db <path>', DB_HELP)
    .option('--json', 'print JSON lines (listening, stopped) instead of text')
    .addHelpText(
      'after',
      [
        '',
        'Every chat call names its trajectory (and, to form groups, its task) in the base URL or in headers:',
        '  base URL  http://HOST:PORT/t/TRAJECTORY/v1             or header x-spindle-trajectory: TRAJECTORY',
        '  with task http://HOST:PORT/t/TRAJECTORY/task/TASK/v1   or header x-spindle-task: TASK',
        'Score (and finish) a trajectory: POST /trajectories/TRAJECTORY/reward {"reward": 1, "parts": {"correct": 1}}',
        'With --judge: score a task\'s group relative to each other (part "judge"): POST /groups/TASK/judge',
      ].join('\n'),
    )
    .action(async (opts) => (await import('./proxy.ts')).proxyCommand(opts));

  addFromStoreTrainOptions(program.command('train'))
    .description('train the default model on an env (warm start, then RL) and evaluate it beside the baselines')
    .option('--env <name|path>', 'built-in env name or a path to a module exporting an EnvSpec')
    .option('--env-opt <key=value>', 'env option (repeatable)', collect, [])
    .option('--config <file.json>', 'training config (JSON); flags override its fields')
    .option('--steps <n>', 'RL steps', intFlag('--steps', 0, 10_000_000))
    .option('--seed <s>', 'run seed', intFlag('--seed', 0, 999_999))
    .option('--group-size <g>', 'samples per seed (G)', intFlag('--group-size', 1, 1024))
    .option('--batch-seeds <b>', 'seeds per step (B)', intFlag('--batch-seeds', 1, 100_000))
    .option('--lr <lr>', 'RL learning rate', numberFlag('--lr', 1e-12, 10))
    .option('--eval-every <n>', 'steps between evaluations', intFlag('--eval-every', 1, 10_000_000))
    .option('--checkpoint-every <n>', 'steps between checkpoints', intFlag('--checkpoint-every', 1, 10_000_000))
    .option('--threads <n>', 'engine threads (default: all cores)', intFlag('--threads', 1, 256))
    .option('--resume <run>', 'continue a train run from its latest checkpoint')
    .option('--warm-start <run>', "start RL from the warm start of a stored train run (same env and options) instead of warm-starting")
    .option('--init-from <run:RUN[@STEP]>', "start RL from a stored train run's checkpoint (same env, any options: a curriculum) instead of warm-starting")
    .option('--db <path>', DB_HELP)
    .option('--json', 'print one JSON object as the last line')
    .action((opts) => trainOrFromStore(opts, trainCommand));

  registerFromStoreCommands(program);
}
