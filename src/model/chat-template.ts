/**
 * Chat templates (Jinja, as in tokenizer_config.json) rendered with @huggingface/jinja, in the
 * context transformers' `apply_chat_template` builds: `messages` as OpenAI-style dicts, `tools`
 * as OpenAI tool dicts (null when none), `add_generation_prompt`, the special-token strings and any
 * extra keyword arguments (`enable_thinking`).
 */
import { Template } from '@huggingface/jinja';
import { UsageError } from '../core/errors.ts';
import type { Message, ToolSpec } from '../core/messages.ts';
import type { SpecialTokensMap } from './tokenizer/tokenizer.ts';

export interface HfToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: Record<string, unknown> };
}

/** A message as transformers' templates read it. */
export interface HfMessage {
  role: string;
  content: string;
  reasoning_content?: string;
  tool_calls?: HfToolCall[];
  tool_call_id?: string;
  name?: string;
}

export interface HfTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** Spindle message -> the dict a Hugging Face chat template expects. */
export function toHfMessage(message: Message): HfMessage {
  const out: HfMessage = { role: message.role, content: message.content };
  if (message.reasoning !== undefined) out.reasoning_content = message.reasoning;
  if (message.toolCalls && message.toolCalls.length > 0) {
    out.tool_calls = message.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  if (message.toolCallId !== undefined) out.tool_call_id = message.toolCallId;
  if (message.name !== undefined) out.name = message.name;
  return out;
}

/** Spindle tool spec -> an OpenAI tool dict (`informational` is Spindle's own and is left out). */
export function toHfTool(tool: ToolSpec): HfTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

export interface RenderOptions {
  tools?: readonly ToolSpec[];
  /** Append the assistant header so the model writes the next turn (default false). */
  addGenerationPrompt?: boolean;
  /** Extra template variables, e.g. `{ enable_thinking: false }` for Qwen3. */
  extra?: Record<string, unknown>;
}

/** A parsed chat template with the special-token strings it is rendered with. */
export class ChatTemplate {
  private readonly template: Template;

  constructor(
    readonly source: string,
    readonly specialTokens: SpecialTokensMap = {},
    private readonly label = 'chat_template',
  ) {
    try {
      this.template = new Template(source);
    } catch (error) {
      throw new UsageError(`${label}: cannot parse the chat template (${(error as Error).message})`);
    }
  }

  render(messages: readonly Message[], options: RenderOptions = {}): string {
    if (messages.length === 0) throw new UsageError('chat template: no messages to render');
    const tools = options.tools && options.tools.length > 0 ? options.tools.map(toHfTool) : null;
    try {
      // The library itself defines raise_exception and strftime_now, as transformers does.
      return this.template.render({
        ...this.specialTokens,
        ...options.extra,
        messages: messages.map(toHfMessage),
        tools,
        add_generation_prompt: options.addGenerationPrompt ?? false,
      });
    } catch (error) {
      throw new UsageError(`${this.label}: rendering failed (${(error as Error).message})`);
    }
  }
}
