/**
 * The text the default tokenizer is trained on: episodes of each env played by the real agent loop
 * with random legal actions (src/agent: the same system prompt, observations, tool calls and tool
 * results the model will see), rendered through the model's chat template with the tools, as the
 * embedded policy renders its prompts; plus the instructions and tool specs on their own and any
 * extra text given. Lives in src/train because it plays envs (src/model must not import src/envs).
 */
import { UsageError } from '../core/errors.ts';
import { Rng } from '../core/random.ts';
import type { EnvSpec } from '../envs/env.ts';
import { listEnvs } from '../envs/registry.ts';
import { ChatTemplate } from '../model/chat-template.ts';
import { CHATML_TOOL_TEMPLATE } from '../model/tokenizer/chatml-template.ts';
import { randomPolicy } from '../policy/scripted.ts';
import { runRollouts } from '../rollout/rollouts.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySpec = EnvSpec<any>;

/** An env with the options to play it with (default: the schema's defaults). */
export interface CorpusEnv {
  spec: AnySpec;
  options: Record<string, unknown>;
}

export interface CorpusOptions {
  /** Envs to play; default: every registered env with its default options. */
  envs?: readonly (AnySpec | CorpusEnv)[];
  /** Episodes per env (default 24), each capped at `maxSteps` decisions (default 12). */
  episodesPerEnv?: number;
  maxSteps?: number;
  seed?: number;
  /** More text to train on (a user's own prompts, for instance). */
  extra?: readonly string[];
  /** The chat template the episodes are rendered with (default: the default tokenizer's ChatML). */
  template?: string;
}


function asCorpusEnv(env: AnySpec | CorpusEnv): CorpusEnv | null {
  if ('spec' in env) return env;
  const parsed = env.options.safeParse({});
  // An env without defaults for every option cannot be played unattended.
  return parsed.success ? { spec: env, options: parsed.data as Record<string, unknown> } : null;
}

async function playEpisodes({ spec, options }: CorpusEnv, episodes: number, maxSteps: number, baseSeed: number, template: ChatTemplate): Promise<string[]> {
  const instructions = spec.instructions(options);
  const texts: string[] = [instructions];
  const result = await runRollouts({
    spec,
    options,
    policy: randomPolicy(),
    count: episodes,
    baseSeed,
    episode: { maxTurns: maxSteps },
  });
  const failed = result.trajectories.find((t) => t.status === 'failed');
  if (failed) throw new Error(failed.statusReason ?? 'an episode failed');
  const tools = result.trajectories[0]?.turns[0]?.calls[0]?.tools ?? [];
  texts.push(...tools.map((tool) => JSON.stringify(tool)));
  for (const t of result.trajectories) {
    const callTools = t.turns[0]?.calls[0]?.tools ?? tools;
    texts.push(template.render(t.messages, { tools: callTools }));
  }
  return texts;
}

/** Builds the training corpus; deterministic under `seed`. */
export async function buildTokenizerCorpus(options: CorpusOptions = {}): Promise<string[]> {
  const envs = (options.envs ?? listEnvs()).map(asCorpusEnv).filter((e): e is CorpusEnv => e !== null);
  const rng = new Rng(options.seed ?? 0);
  const template = new ChatTemplate(options.template ?? CHATML_TOOL_TEMPLATE);
  const texts: string[] = [];
  for (const env of envs) {
    // Seeds below 2^31 keep baseSeed + episodes a safe non-negative integer.
    const baseSeed = rng.nextUint32() >>> 1;
    try {
      texts.push(...(await playEpisodes(env, options.episodesPerEnv ?? 24, options.maxSteps ?? 12, baseSeed, template)));
    } catch (error) {
      throw new UsageError(`tokenizer corpus: env '${env.spec.name}' failed while playing random episodes: ${(error as Error).message}`);
    }
  }
  texts.push(...(options.extra ?? []));
  return texts;
}
