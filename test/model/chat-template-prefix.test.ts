import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Message } from '../../src/core/messages.ts';
import { ChatTemplate } from '../../src/model/chat-template.ts';
import { isPrefixStable, prefixStability } from '../../src/model/chat-template-prefix.ts';
import { CHATML_TOOL_TEMPLATE } from '../../src/model/tokenizer/chatml-template.ts';
import { QWEN3_TOKENIZER_DIR } from './tokenizer-fixtures.ts';

const qwen = new ChatTemplate(JSON.parse(readFileSync(join(QWEN3_TOKENIZER_DIR, 'tokenizer_config.json'), 'utf8')).chat_template);
const spindle = new ChatTemplate(CHATML_TOOL_TEMPLATE);

const call = (id: string, action: string) => ({ id, name: 'play', arguments: { action } });

/** One user query, then tool turns: Qwen3 keeps every turn's reasoning here. */
const oneQuery: Message[] = [
  { role: 'system', content: 'Play blackjack.' },
  { role: 'user', content: 'Hand 12, dealer 10.' },
  { role: 'assistant', content: '', reasoning: 'hit', toolCalls: [call('c0', 'hit')] },
  { role: 'tool', content: 'Hand 17.', toolCallId: 'c0', name: 'play' },
  { role: 'assistant', content: '', reasoning: 'stand', toolCalls: [call('c1', 'stick')] },
];

/** A second user query follows reasoning turns: Qwen3 strips the earlier reasoning. */
const twoQueries: Message[] = [
  ...oneQuery,
  { role: 'tool', content: 'You win.', toolCallId: 'c1', name: 'play' },
  { role: 'user', content: 'Next hand: 20, dealer 6.' },
  { role: 'assistant', content: '', reasoning: 'stand', toolCalls: [call('c2', 'stick')] },
];

test('Qwen3 is prefix-stable within one user query', () => {
  assert.deepEqual(prefixStability(qwen, oneQuery), { stable: true, assistantTurns: [2, 4] });
});

test('Qwen3 is not prefix-stable once a new user query follows reasoning turns', () => {
  const result = prefixStability(qwen, twoQueries);
  assert.equal(result.stable, false);
  assert.ok(!result.stable);
  assert.equal(result.messageIndex, 2);
  assert.match(result.reason, /turn 2 renders differently once later messages follow/);
  assert.equal(isPrefixStable(qwen, twoQueries), false);
});

test('Qwen3 is not prefix-stable when a non-final turn has no reasoning (empty think block only on the last turn)', () => {
  const noReasoning = oneQuery.map((m) => (m.role === 'assistant' ? { ...m, reasoning: undefined } : m));
  const result = prefixStability(qwen, noReasoning);
  assert.ok(!result.stable && result.messageIndex === 2);
});

test("Spindle's default template keeps reasoning, so both conversations are prefix-stable", () => {
  assert.equal(isPrefixStable(spindle, oneQuery), true);
  assert.deepEqual(prefixStability(spindle, twoQueries, { tools: [] }), { stable: true, assistantTurns: [2, 4, 7] });
});

test('sampled text that the template would re-render differently breaks stability', () => {
  const exact = '<think>\nhit\n</think>\n\n<tool_call>\n{"name": "play", "arguments": {"action": "hit"}}\n</tool_call><|im_end|>';
  assert.equal(isPrefixStable(spindle, oneQuery, { completions: { 2: exact } }), true);
  const compact = '<think>\nhit\n</think>\n\n<tool_call>\n{"name":"play","arguments":{"action":"hit"}}\n</tool_call><|im_end|>';
  const result = prefixStability(spindle, oneQuery, { completions: { 2: compact } });
  assert.ok(!result.stable);
  assert.match(result.reason, /turn 2 renders differently from what was sampled/);
});
