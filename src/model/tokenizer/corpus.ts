/**
 * The text the default tokenizer is trained on: episodes of every registered env (built-in and
 * user-registered), played with random legal actions and rendered through the default chat template
 * (system prompt with instructions and tools, observations, tool calls, tool results), plus the tool
 * specs as compact JSON (the agent loop lists them that way) and any extra text given.
 */
import { UsageError } from '../../core/errors.ts';
import { Rng } from '../../core/random.ts';
import type { Message, ToolCall } from '../../core/messages.ts';
import type { Action, EnvSpec } from '../../envs/env.ts';
import { listEnvs } from '../../envs/registry.ts';
import { ChatTemplate } from '../chat-template.ts';
import { CHATML_TOOL_TEMPLATE } from './chatml-template.ts';

export interface CorpusOptions {
  /** Envs to play; default: every registered env. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  envs?: readonly EnvSpec<any>[];
  /** Episodes per env (default 24), each capped at `maxSteps` decisions (default 12). */
  episodesPerEnv?: number;
  maxSteps?: number;
  seed?: number;
  /** More text to train on (a user's own prompts, for instance). */
  extra?: readonly string[];
}

const template = new ChatTemplate(CHATML_TOOL_TEMPLATE);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function playEpisodes(spec: EnvSpec<any>, episodes: number, maxSteps: number, rng: Rng): Promise<string[]> {
  const parsed = spec.options.safeParse({});
  if (!parsed.success) return []; // an env without defaults for every option cannot be played unattended
  const options = parsed.data;
  const env = spec.create(options);
  const instructions = spec.instructions(options);
  const texts: string[] = [instructions];
  for (let episode = 0; episode < episodes; episode++) {
    const reset = await env.reset(rng.nextUint32());
    if (episode === 0) texts.push(...reset.tools.map((tool) => JSON.stringify(tool)));
    const messages: Message[] = [
      { role: 'system', content: instructions },
      { role: 'user', content: reset.observation },
    ];
    for (let step = 0; step < maxSteps; step++) {
      const legal = env.legalActions();
      if (legal.length === 0) break;
      const action: Action = legal[rng.int(legal.length)];
      const call: ToolCall = { id: `call_${step}`, name: action.name, arguments: action.arguments };
      messages.push({ role: 'assistant', content: '', toolCalls: [call] });
      const result = await env.step(action);
      messages.push({ role: 'tool', content: result.observation, toolCallId: call.id, name: call.name });
      if (result.done || result.truncated) break;
    }
    texts.push(template.render(messages, { tools: reset.tools }));
  }
  return texts;
}

/** Builds the training corpus; deterministic under `seed`. */
export async function buildTokenizerCorpus(options: CorpusOptions = {}): Promise<string[]> {
  const envs = options.envs ?? listEnvs();
  const rng = new Rng(options.seed ?? 0);
  const texts: string[] = [];
  for (const spec of envs) {
    try {
      texts.push(...(await playEpisodes(spec, options.episodesPerEnv ?? 24, options.maxSteps ?? 12, rng)));
    } catch (error) {
      throw new UsageError(`tokenizer corpus: env '${spec.name}' failed while playing random episodes: ${(error as Error).message}`);
    }
  }
  texts.push(...(options.extra ?? []));
  return texts;
}
