/**
 * Accumulates an OpenAI SSE stream (`data: {chunk}` events, `data: [DONE]`) into the response it
 * stands for, so a streamed call is recorded like a plain one. Bytes are passed through to the
 * client untouched elsewhere; this only reads them.
 */
import type { WireChoice, WireResponse } from './proxy-completion.ts';

interface ChunkChoice {
  index?: number;
  delta?: {
    content?: string | null;
    reasoning_content?: string | null;
    reasoning?: string | null;
    tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[] | null;
  };
  finish_reason?: string | null;
  logprobs?: { content?: { token: string; logprob: number }[] | null } | null;
  token_ids?: number[] | null;
}

interface Chunk {
  model?: string;
  choices?: ChunkChoice[];
  prompt_token_ids?: number[] | null;
  policy_version?: number;
}

interface ChoiceState {
  content: string;
  reasoning: string;
  toolCalls: { id?: string; name: string; arguments: string }[];
  finishReason: string | null;
  logprobs: { token: string; logprob: number }[] | null;
  tokenIds: number[] | null;
}

export class SseAccumulator {
  private buffer = '';
  private readonly decoder = new TextDecoder();
  private readonly choices = new Map<number, ChoiceState>();
  private model: string | undefined;
  private promptTokenIds: number[] | null = null;
  private policyVersion: number | undefined;
  /** Events that were not JSON (counted, not fatal: the client got them as sent). */
  malformedEvents = 0;

  push(bytes: Uint8Array): void {
    this.buffer += this.decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = this.buffer.search(/\r?\n\r?\n/)) >= 0) {
      const event = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      this.onEvent(event);
    }
  }

  private onEvent(event: string): void {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (data === '' || data === '[DONE]') return;
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      this.malformedEvents++;
      return;
    }
    if (chunk.model) this.model = chunk.model;
    if (Array.isArray(chunk.prompt_token_ids)) this.promptTokenIds = chunk.prompt_token_ids;
    if (typeof chunk.policy_version === 'number') this.policyVersion = chunk.policy_version;
    for (const c of chunk.choices ?? []) this.onChoice(c);
  }

  private onChoice(c: ChunkChoice): void {
    const index = c.index ?? 0;
    let s = this.choices.get(index);
    if (!s) {
      s = { content: '', reasoning: '', toolCalls: [], finishReason: null, logprobs: null, tokenIds: null };
      this.choices.set(index, s);
    }
    const d = c.delta ?? {};
    if (d.content) s.content += d.content;
    const reasoning = d.reasoning_content ?? d.reasoning;
    if (reasoning) s.reasoning += reasoning;
    for (const t of d.tool_calls ?? []) {
      const i = t.index ?? s.toolCalls.length;
      const call = (s.toolCalls[i] ??= { name: '', arguments: '' });
      if (t.id) call.id = t.id;
      if (t.function?.name) call.name += t.function.name;
      if (t.function?.arguments) call.arguments += t.function.arguments;
    }
    if (c.finish_reason) s.finishReason = c.finish_reason;
    if (c.logprobs?.content) (s.logprobs ??= []).push(...c.logprobs.content);
    if (Array.isArray(c.token_ids)) (s.tokenIds ??= []).push(...c.token_ids);
  }

  /** The response the stream amounts to so far. */
  response(): WireResponse {
    const choices: WireChoice[] = [...this.choices].map(([index, s]) => ({
      index,
      message: {
        content: s.content,
        reasoning_content: s.reasoning || null,
        tool_calls: s.toolCalls.filter(Boolean).map((t) => ({ ...(t.id ? { id: t.id } : {}), function: { name: t.name, arguments: t.arguments } })),
      },
      finish_reason: s.finishReason,
      logprobs: s.logprobs ? { content: s.logprobs } : null,
      token_ids: s.tokenIds,
    }));
    return {
      ...(this.model ? { model: this.model } : {}),
      choices,
      prompt_token_ids: this.promptTokenIds,
      ...(this.policyVersion !== undefined ? { policy_version: this.policyVersion } : {}),
    };
  }
}
