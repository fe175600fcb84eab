/** Chat messages, tool specs and tool calls: the vocabulary shared by envs, policies and the agent loop. */

export type Role = 'system' | 'user' | 'assistant' | 'tool';

/** A JSON-schema object describing a tool's arguments (OpenAI `parameters`). */
export type JsonSchema = Record<string, unknown>;

export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
  /**
   * An informational tool (a price lookup) is answered by the env without ending the decision;
   * every other tool is an action that steps the env.
   */
  informational?: boolean;
}

export interface ToolCall {
  /** Call id, as OpenAI `tool_calls[].id`; the agent loop makes one when the model gave none. */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface Message {
  role: Role;
  content: string;
  /** Reasoning split off the visible content (`<think>...</think>` or a server's reasoning field). */
  reasoning?: string;
  /** Assistant messages: the tool calls it made. */
  toolCalls?: ToolCall[];
  /** Tool messages: the call this answers. */
  toolCallId?: string;
  /** Tool messages: the tool's name. */
  name?: string;
}
