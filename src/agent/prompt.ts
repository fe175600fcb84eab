/**
 * The conversation the agent loop builds. One scheme throughout:
 * - system: the env's instructions, the tools (Hermes-style, one JSON per line in <tools></tools>)
 *   and the call format; it already lists the tools, so a policy must not render them again;
 * - user: the first observation;
 * - assistant: the visible text (tool-call blocks taken out), its reasoning and the parsed calls;
 * - tool: the answer to every call, in order: an informational call's result, an action's next
 *   observation (the env's feedback), or why the call was refused;
 * - user: an error message after an answer that held no parsable call (there is no call to answer).
 */
import type { Message, ToolCall, ToolSpec } from '../core/messages.ts';
import type { ParsedAnswer } from './parse-tool-calls.ts';

const FORMAT = 'Reply with one tool call:\n<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>';
const INFORMATIONAL_NOTE =
  'Tools marked "informational" only answer a question; call them first if you need to, then make your move with another tool.';

export function systemPrompt(instructions: string, tools: readonly ToolSpec[]): string {
  const lines = tools.map((tool) =>
    JSON.stringify(
      tool.informational
        ? { name: tool.name, description: tool.description, parameters: tool.parameters, informational: true }
        : { name: tool.name, description: tool.description, parameters: tool.parameters },
    ),
  );
  const note = tools.some((tool) => tool.informational) ? `\n${INFORMATIONAL_NOTE}` : '';
  return `${instructions.trim()}\n\n<tools>\n${lines.join('\n')}\n</tools>\n${FORMAT}${note}`;
}

const promptCache = new WeakMap<readonly ToolSpec[], { instructions: string; prompt: string }>();

/**
 * systemPrompt, remembered per tools array: envs return the same array every reset, and rendering
 * the schemas is a visible share of a scripted rollout. Tool specs an env has returned must not be
 * changed in place afterwards (recorded calls share them too).
 */
export function cachedSystemPrompt(instructions: string, tools: readonly ToolSpec[]): string {
  const hit = promptCache.get(tools);
  if (hit && hit.instructions === instructions) return hit.prompt;
  const prompt = systemPrompt(instructions, tools);
  promptCache.set(tools, { instructions, prompt });
  return prompt;
}

export function systemMessage(content: string): Message {
  return { role: 'system', content };
}

export function observationMessage(observation: string): Message {
  return { role: 'user', content: observation };
}

export function assistantMessage(answer: ParsedAnswer): Message {
  const message: Message = { role: 'assistant', content: answer.content };
  if (answer.reasoning) message.reasoning = answer.reasoning;
  if (answer.calls.length > 0) message.toolCalls = answer.calls;
  return message;
}

export function toolResultMessage(call: ToolCall, content: string): Message {
  return { role: 'tool', content, toolCallId: call.id, name: call.name };
}

/** Feedback on an answer that was not a legal action, as the model reads it. */
export function invalidAnswerText(message: string, retry: boolean): string {
  return retry ? `Invalid answer: ${message}. Try again.` : `Invalid answer: ${message}. The episode is over.`;
}
