/** OpenAI request messages and tools as Spindle's, for the chat template. */
import type { Message, ToolSpec } from '../core/messages.ts';
import type { ChatMessage, ChatRequest } from './chat-schema.ts';
import { ApiError } from './errors.ts';

function text(content: string | { text: string }[] | null | undefined): string {
  if (content === null || content === undefined) return '';
  return typeof content === 'string' ? content : content.map((p) => p.text).join('');
}

function parseArguments(raw: string, param: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ApiError(400, `${param}: tool call arguments are not JSON`, 'invalid_request_error', param, 'invalid_value');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError(400, `${param}: tool call arguments must be a JSON object`, 'invalid_request_error', param, 'invalid_value');
  }
  return value as Record<string, unknown>;
}

export function toSpindleMessages(messages: ChatMessage[]): Message[] {
  return messages.map((m, i): Message => {
    switch (m.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: text(m.content) };
      case 'user':
        return { role: 'user', content: text(m.content) };
      case 'tool':
        return { role: 'tool', content: text(m.content), toolCallId: m.tool_call_id };
      case 'assistant': {
        const calls = (m.tool_calls ?? []).map((c, j) => ({
          id: c.id,
          name: c.function.name,
          arguments: parseArguments(c.function.arguments, `messages.${i}.tool_calls.${j}.function.arguments`),
        }));
        return {
          role: 'assistant',
          content: text(m.content),
          ...(m.reasoning_content ? { reasoning: m.reasoning_content } : {}),
          ...(calls.length > 0 ? { toolCalls: calls } : {}),
        };
      }
    }
  });
}

export function toSpindleTools(tools: ChatRequest['tools']): ToolSpec[] {
  return (tools ?? []).map((t) => ({ name: t.function.name, description: t.function.description ?? '', parameters: t.function.parameters ?? { type: 'object', properties: {} } }));
}
