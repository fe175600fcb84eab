/** The `/v1/chat/completions` request body as this server accepts it (unknown fields are ignored, as vLLM does). */
import { z } from 'zod';
import { ApiError } from './errors.ts';

const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/** Message content: a string or text parts (other part kinds are rejected). */
const contentSchema = z.union([z.string(), z.array(z.object({ type: z.literal('text'), text: z.string() }))]);

const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['system', 'developer']), content: contentSchema }),
  z.object({ role: z.literal('user'), content: contentSchema }),
  z.object({ role: z.literal('assistant'), content: contentSchema.nullish(), tool_calls: z.array(toolCallSchema).nullish(), reasoning_content: z.string().nullish() }),
  z.object({ role: z.literal('tool'), content: contentSchema, tool_call_id: z.string() }),
]);

const toolSchema = z.object({
  type: z.literal('function'),
  function: z.object({ name: z.string().min(1), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }),
});

export const chatRequestSchema = z.object({
  model: z.string().min(1),
  messages: z.array(messageSchema).min(1),
  tools: z.array(toolSchema).optional(),
  tool_choice: z.unknown().optional(),
  n: z.int().min(1).max(64).optional(),
  temperature: z.number().min(0).max(10).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  top_k: z.int().min(-1).nullish(),
  max_tokens: z.int().min(1).nullish(),
  max_completion_tokens: z.int().min(1).nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(16)]).nullish(),
  seed: z.int().min(0).max(2 ** 32 - 1).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.int().min(0).max(20).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  return_token_ids: z.boolean().nullish(),
  return_tokens_as_token_ids: z.boolean().nullish(),
});

export type ChatRequest = z.infer<typeof chatRequestSchema>;
export type ChatMessage = ChatRequest['messages'][number];

/** Validates a parsed body; the first problem becomes a 400 naming its field. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError(400, 'the request body must be a JSON object', 'invalid_request_error', null, 'invalid_body');
  }
  const parsed = chatRequestSchema.safeParse(body);
  if (parsed.success) {
    const { logprobs, top_logprobs } = parsed.data;
    if (top_logprobs != null && top_logprobs > 0 && logprobs !== true) {
      throw new ApiError(400, "Invalid value for 'top_logprobs': 'logprobs' must be set to true when 'top_logprobs' is used", 'invalid_request_error', 'top_logprobs', 'invalid_value');
    }
    return parsed.data;
  }
  const issue = parsed.error.issues[0];
  const param = issue.path.map(String).join('.') || null;
  throw new ApiError(400, `${param ?? 'body'}: ${issue.message}`, 'invalid_request_error', param, issue.code === 'invalid_type' ? 'invalid_type' : 'invalid_value');
}
