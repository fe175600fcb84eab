/**
 * An OpenAI chat request's messages and tools → Spindle's Message[] and ToolSpec[]. Checked with zod
 * where they enter (a request that is not a chat request is refused before it is forwarded), but
 * loosely: unknown fields are the upstream's business and are forwarded untouched.
 */
import { z } from 'zod';
import { describeZodError } from '../core/schemas.ts';
import type { Message, ToolCall, ToolSpec } from '../core/messages.ts';
import type { CallSampling } from '../core/trajectory.ts';
import { ProxyRequestError } from './proxy-errors.ts';

const contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const content = z.union([z.string(), z.array(contentPart), z.null()]).optional();
const wireToolCall = z.looseObject({
  id: z.string().optional(),
  type: z.string().optional(),
  function: z.looseObject({ name: z.string(), arguments: z.string().optional() }),
});
const wireMessage = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content,
  reasoning_content: z.string().nullable().optional(),
  tool_calls: z.array(wireToolCall).nullable().optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
});
const wireTool = z.looseObject({
  type: z.string().optional(),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

export const chatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(wireMessage).min(1, 'at least one message is required'),
  tools: z.array(wireTool).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  n: z.number().int().min(1).nullable().optional(),
  // Sampling settings, checked only as far as the record needs (the upstream judges their ranges).
  temperature: z.number().min(0).nullish(),
  top_p: z.number().nullish(),
  top_k: z.number().int().nullish(),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  seed: z.number().int().nullish(),
});
export type ChatRequest = z.infer<typeof chatRequestSchema>;
type WireMessage = z.infer<typeof wireMessage>;

export function parseChatRequest(body: unknown): ChatRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ProxyRequestError(400, 'the request body must be a JSON object');
  }
  const parsed = chatRequestSchema.safeParse(body);
  if (!parsed.success) throw new ProxyRequestError(400, describeZodError(parsed.error), String(parsed.error.issues[0]?.path[0] ?? ''));
  return parsed.data;
}

export function contentText(value: WireMessage['content']): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return value.map((part) => part.text ?? '').join('');
}

/** Tool arguments arrive as a JSON string; a string that is not a JSON object is kept under `_raw`. */
export function parseArguments(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined || raw.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(raw);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through: kept verbatim below
  }
  return { _raw: raw };
}

export function toToolCalls(calls: readonly { id?: string; function: { name: string; arguments?: string } }[]): ToolCall[] {
  return calls.map((c, i) => ({ id: c.id ?? `call_${i}`, name: c.function.name, arguments: parseArguments(c.function.arguments) }));
}

function toMessage(m: WireMessage): Message {
  // `developer` is OpenAI's newer name for the system role.
  const message: Message = { role: m.role === 'developer' ? 'system' : m.role, content: contentText(m.content) };
  if (m.reasoning_content) message.reasoning = m.reasoning_content;
  if (m.tool_calls && m.tool_calls.length > 0) message.toolCalls = toToolCalls(m.tool_calls);
  if (m.tool_call_id !== undefined) message.toolCallId = m.tool_call_id;
  if (m.name !== undefined) message.name = m.name;
  return message;
}

export function toMessages(request: ChatRequest): Message[] {
  return request.messages.map(toMessage);
}

/**
 * What the request asked its sampler for; null where it left a setting to the upstream's default.
 * A top_k ≤ 0 is vLLM's "off" and is not recorded.
 */
export function toCallSampling(request: ChatRequest): CallSampling {
  const { temperature, top_p, top_k, stop, seed } = request;
  const stops = stop == null ? [] : typeof stop === 'string' ? [stop] : stop;
  return {
    temperature: temperature ?? null,
    maxTokens: request.max_completion_tokens ?? request.max_tokens ?? null,
    ...(top_p != null ? { topP: top_p } : {}),
    ...(top_k != null && top_k > 0 ? { topK: top_k } : {}),
    ...(stops.length > 0 ? { stop: stops } : {}),
    ...(seed != null ? { seed } : {}),
  };
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function toToolSpecs(request: ChatRequest): ToolSpec[] {
  return (request.tools ?? []).map((t, i) => {
    if (!TOOL_NAME.test(t.function.name)) {
      throw new ProxyRequestError(400, `tools.${i}.function.name: tool names are 1-64 letters, digits, _ or -`, `tools.${i}.function.name`);
    }
    return { name: t.function.name, description: t.function.description ?? '', parameters: t.function.parameters ?? {} };
  });
}
