/**
 * Turns a completion into tool calls: Hermes-style `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`
 * blocks in the text (several allowed), or the server's own `tool_calls`. Tolerates slips that do not
 * change the action (single quotes, trailing commas, code fences, text around the call, a missing
 * `</tool_call>`, arguments as a JSON string, `parameters` for `arguments`, a bare call object without
 * tags) and never guesses one: a tool name must match an offered tool exactly.
 */
import type { Completion } from '../core/completion.ts';
import type { ToolCall, ToolSpec } from '../core/messages.ts';
import type { ParseError, ParseErrorKind } from '../core/trajectory.ts';
import { checkArguments, isPlainObject } from './check-arguments.ts';
import { endOfBalanced, parseLenientJson } from './lenient-json.ts';
import { splitReasoning } from './split-reasoning.ts';

export interface ParsedAnswer {
  /** The visible text with reasoning and tool-call blocks removed, trimmed. */
  content: string;
  /** Reasoning from `<think>` blocks and/or the server's reasoning field; null when there was none. */
  reasoning: string | null;
  /** The calls, each checked against the offered tools; empty when `error` is set. */
  calls: ToolCall[];
  error: ParseError | null;
}

export interface ParseOptions {
  /** Ids for calls the model gave none: `${idPrefix}${index}` (default `call_`). */
  idPrefix?: string;
}

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';
/** A code fence left empty once the call inside it is taken out. */
const EMPTY_FENCE = /```[A-Za-z]*\s*```/g;

type Candidate = { ok: true; name: string; arguments: Record<string, unknown>; id?: string } | { ok: false; message: string };

export function parseCompletion(
  completion: Pick<Completion, 'text' | 'toolCalls' | 'reasoning'>,
  tools: readonly ToolSpec[],
  options: ParseOptions = {},
): ParsedAnswer {
  const split = splitReasoning(completion.text);
  const reasoning = joinReasoning(completion.reasoning, split.reasoning);
  let content = split.content;
  let candidates: Candidate[];
  if (completion.toolCalls && completion.toolCalls.length > 0) {
    candidates = completion.toolCalls.map((call) => fromServerCall(call));
  } else if (content.includes(OPEN)) {
    const tagged = taggedBlocks(content);
    content = tagged.visible;
    candidates = tagged.bodies.flatMap(callsInBody);
  } else {
    const bare = bareCalls(content);
    content = bare.visible;
    candidates = bare.calls;
  }

  const fail = (kind: ParseErrorKind, message: string): ParsedAnswer => ({
    content,
    reasoning,
    calls: [],
    error: { kind, message, raw: completion.text },
  });
  if (candidates.length === 0) {
    if (content === '' && reasoning === null) return fail('empty', 'the answer is empty: reply with a tool call');
    if (content === '') return fail('no_tool_call', 'the answer has reasoning but no tool call (was it cut off while thinking?)');
    return fail('no_tool_call', `no tool call found: reply with ${OPEN}{"name": ..., "arguments": {...}}${CLOSE}`);
  }

  const prefix = options.idPrefix ?? 'call_';
  const calls: ToolCall[] = [];
  for (let i = 0; i < candidates.length; i++) {
    const candidate = candidates[i];
    if (!candidate.ok) return fail('malformed_json', candidate.message);
    const tool = findTool(tools, candidate.name);
    if (!tool) {
      return fail('unknown_tool', `unknown tool '${candidate.name}'; the tools are: ${tools.map((t) => t.name).join(', ')}`);
    }
    const problem = checkArguments(tool.parameters, candidate.arguments);
    if (problem) return fail('bad_arguments', `tool '${tool.name}': ${problem}`);
    calls.push({ id: candidate.id ?? `${prefix}${i}`, name: tool.name, arguments: candidate.arguments });
  }
  return { content, reasoning, calls, error: null };
}

function findTool(tools: readonly ToolSpec[], name: string): ToolSpec | undefined {
  for (const tool of tools) if (tool.name === name) return tool;
  return undefined;
}

function joinReasoning(server: string | undefined, inline: string | null): string | null {
  if (server === undefined || server === '') return inline;
  return inline === null || inline === '' ? server : `${server}\n\n${inline}`;
}

/** The bodies of `<tool_call>` blocks; a block left open runs to the next `<tool_call>` or the end. */
function taggedBlocks(text: string): { bodies: string[]; visible: string } {
  const bodies: string[] = [];
  let visible = '';
  let pos = 0;
  let open = text.indexOf(OPEN);
  while (open !== -1) {
    visible += text.slice(pos, open);
    const bodyStart = open + OPEN.length;
    const close = text.indexOf(CLOSE, bodyStart);
    const nextOpen = text.indexOf(OPEN, bodyStart);
    if (close !== -1 && (nextOpen === -1 || close < nextOpen)) {
      bodies.push(text.slice(bodyStart, close));
      pos = close + CLOSE.length;
    } else {
      pos = nextOpen === -1 ? text.length : nextOpen;
      bodies.push(text.slice(bodyStart, pos));
    }
    open = text.indexOf(OPEN, pos);
  }
  visible += text.slice(pos);
  return { bodies, visible: tidy(visible) };
}

/** The call(s) in one `<tool_call>` body: the first JSON object (or array of call objects) in it. */
function callsInBody(body: string): Candidate[] {
  const start = firstBracket(body);
  if (start === -1) return [{ ok: false, message: `no JSON object inside ${OPEN}...${CLOSE}` }];
  const end = endOfBalanced(body, start);
  if (end === -1) return [{ ok: false, message: 'the tool call JSON never closes (was the answer cut off?)' }];
  const parsed = parseLenientJson(body.slice(start, end));
  if (!parsed.ok) return [{ ok: false, message: `the tool call is not valid JSON: ${parsed.message}` }];
  if (Array.isArray(parsed.value)) {
    if (parsed.value.length === 0) return [{ ok: false, message: 'the tool call is an empty list' }];
    return parsed.value.map(toCandidate);
  }
  return [toCandidate(parsed.value)];
}

function firstBracket(text: string): number {
  const brace = text.indexOf('{');
  const bracket = text.indexOf('[');
  if (brace === -1) return bracket;
  if (bracket === -1) return brace;
  return Math.min(brace, bracket);
}

/** Call objects written without tags (bare or in a code fence); other JSON in the text is left alone. */
function bareCalls(text: string): { calls: Candidate[]; visible: string } {
  const calls: Candidate[] = [];
  let visible = '';
  let pos = 0;
  let start = text.indexOf('{');
  while (start !== -1) {
    const end = endOfBalanced(text, start);
    if (end === -1) break;
    const parsed = parseLenientJson(text.slice(start, end));
    if (parsed.ok && looksLikeCall(parsed.value)) {
      calls.push(toCandidate(parsed.value));
      visible += text.slice(pos, start);
      pos = end;
    }
    start = text.indexOf('{', end);
  }
  if (calls.length === 0) return { calls, visible: text };
  visible += text.slice(pos);
  return { calls, visible: tidy(visible) };
}

function looksLikeCall(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  if (isPlainObject(value.function)) return typeof value.function.name === 'string';
  return typeof value.name === 'string' && ('arguments' in value || 'parameters' in value);
}

/** `{"name", "arguments"}`, `{"name", "parameters"}` or OpenAI's `{"type": "function", "function": {...}}`. */
function toCandidate(value: unknown): Candidate {
  if (!isPlainObject(value)) return { ok: false, message: 'a tool call must be a JSON object with "name" and "arguments"' };
  const call = isPlainObject(value.function) && value.name === undefined ? value.function : value;
  if (typeof call.name !== 'string' || call.name === '') {
    return { ok: false, message: 'the tool call has no "name" string' };
  }
  const args = argumentsOf(call.arguments !== undefined ? call.arguments : call.parameters);
  if (!args.ok) return args;
  return { ok: true, name: call.name, arguments: args.value };
}

function argumentsOf(raw: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  if (raw === undefined || raw === null) return { ok: true, value: {} };
  if (typeof raw === 'string') {
    if (raw.trim() === '') return { ok: true, value: {} };
    const parsed = parseLenientJson(raw);
    if (!parsed.ok) return { ok: false, message: `"arguments" is a string that is not valid JSON: ${parsed.message}` };
    raw = parsed.value;
  }
  if (!isPlainObject(raw)) return { ok: false, message: '"arguments" must be a JSON object' };
  return { ok: true, value: raw };
}

function fromServerCall(call: { id?: string; name: string; arguments: string }): Candidate {
  if (typeof call.name !== 'string' || call.name === '') return { ok: false, message: 'a server tool call has no name' };
  const args = argumentsOf(call.arguments);
  if (!args.ok) return args;
  return { ok: true, name: call.name, arguments: args.value, id: call.id };
}

function tidy(visible: string): string {
  return visible.includes('```') ? visible.replace(EMPTY_FENCE, '').trim() : visible.trim();
}
