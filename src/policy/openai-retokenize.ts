/**
 * Re-tokenisation for servers that report no token ids (`--tokenizer DIR`): the prompt is the folder's
 * chat template rendered with the generation prompt and encoded; the completion is the assistant
 * message as that template writes it after the generation prompt, through the end-of-turn token
 * (assistantCompletionText, as the warm start's demonstrations), encoded. The ids are approximate:
 * the server may render or tokenise differently, so callers mark them `tokenIdsExact: false`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../core/errors.ts';
import type { FinishReason } from '../core/completion.ts';
import type { Message, ToolCall, ToolSpec } from '../core/messages.ts';
import { ChatTemplate } from '../model/chat-template.ts';
import { readChatTemplateSource } from '../model/chat-template-source.ts';
import { parseGenerationConfig } from '../model/checkpoint-generation.ts';
import { readJsonFile, tokenizerFromJson, type Tokenizer } from '../model/tokenizer/tokenizer.ts';
import { assistantCompletionText } from '../model/assistant-completion-text.ts';

/** What re-tokenisation needs of a model folder: its tokenizer, chat template and end-of-turn ids. */
export interface RetokenizerAssets {
  tokenizer: Tokenizer;
  chatTemplate: ChatTemplate;
  stopTokenIds: number[];
}

/** The answer as the server returned it, before the agent loop parses it. */
export interface ServerAnswer {
  text: string;
  reasoning?: string;
  toolCalls?: { id?: string; name: string; arguments: string }[];
  finishReason: FinishReason;
}

/** Loads tokenizer.json, tokenizer_config.json, the chat template and (when present) generation_config.json of DIR. */
export function loadRetokenizerAssets(dir: string): RetokenizerAssets {
  if (!existsSync(dir)) throw new UsageError(`--tokenizer: folder not found: ${dir}`);
  const config = readJsonFile(join(dir, 'tokenizer_config.json'));
  const tokenizer = tokenizerFromJson(readJsonFile(join(dir, 'tokenizer.json')), config, dir);
  const source = readChatTemplateSource(dir, (config ?? {}) as Record<string, unknown>);
  if (source === null) throw new UsageError(`--tokenizer ${dir}: no chat template (tokenizer_config.json chat_template or chat_template.jinja)`);
  const chatTemplate = new ChatTemplate(source, tokenizer.specialTokensMap, join(dir, 'tokenizer_config.json'));
  const generationPath = join(dir, 'generation_config.json');
  const generation = existsSync(generationPath) ? parseGenerationConfig(readJsonFile(generationPath), generationPath) : null;
  const stopTokenIds = [...new Set([...(tokenizer.eosTokenId === null ? [] : [tokenizer.eosTokenId]), ...(generation?.eosTokenIds ?? [])])];
  if (stopTokenIds.length === 0) throw new UsageError(`--tokenizer ${dir}: no end-of-turn token (tokenizer_config.json eos_token or generation_config.json eos_token_id)`);
  return { tokenizer, chatTemplate, stopTokenIds };
}

/** Prompt ids: the template's render of the messages (with the tools the server was sent) and the generation prompt. */
export function retokenizePrompt(assets: RetokenizerAssets, messages: Message[], tools: ToolSpec[]): number[] {
  return assets.tokenizer.encode(assets.chatTemplate.render(messages, { tools, addGenerationPrompt: true }), { addSpecialTokens: false });
}

function toolCallsOf(answer: ServerAnswer): ToolCall[] | undefined {
  if (!answer.toolCalls || answer.toolCalls.length === 0) return undefined;
  return answer.toolCalls.map((c, i) => {
    const args: unknown = JSON.parse(c.arguments);
    if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new Error(`tool call ${i}: arguments are not a JSON object`);
    return { id: c.id ?? `call_${i}`, name: c.name, arguments: args as Record<string, unknown> };
  });
}

/**
 * Completion ids: the answer rendered as the template writes an assistant message, encoded. An answer
 * cut at max tokens never sampled the end-of-turn token, so it is left out then.
 */
export function retokenizeCompletion(assets: RetokenizerAssets, messages: Message[], tools: ToolSpec[], answer: ServerAnswer): number[] {
  const toolCalls = toolCallsOf(answer);
  const message: Message = {
    role: 'assistant',
    content: answer.text,
    ...(answer.reasoning !== undefined ? { reasoning: answer.reasoning } : {}),
    ...(toolCalls ? { toolCalls } : {}),
  };
  let text = assistantCompletionText(assets, messages, tools, message);
  if (answer.finishReason === 'length') {
    const stop = assets.stopTokenIds.map((id) => assets.tokenizer.decode([id])).find((s) => text.endsWith(s));
    if (stop !== undefined) text = text.slice(0, text.length - stop.length);
  }
  return assets.tokenizer.encode(text, { addSpecialTokens: false });
}
