import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Message, ToolSpec } from '../../src/core/messages.ts';
import { ChatTemplate, toHfMessage, toHfTool } from '../../src/model/chat-template.ts';
import { QWEN3_TOKENIZER_DIR } from './tokenizer-fixtures.ts';

const qwenSource = JSON.parse(readFileSync(join(QWEN3_TOKENIZER_DIR, 'tokenizer_config.json'), 'utf8')).chat_template as string;
const qwen = new ChatTemplate(qwenSource, { eos_token: '<|im_end|>', pad_token: '<|endoftext|>' });

const tools: ToolSpec[] = [
  {
    name: 'play',
    description: 'Make a move',
    parameters: { type: 'object', properties: { action: { type: 'string', enum: ['hit', 'stick'] } }, required: ['action'] },
  },
  { name: 'count', description: 'Running count (informational)', parameters: { type: 'object', properties: {} }, informational: true },
];

const conversation: Message[] = [
  { role: 'system', content: 'You are a blackjack player.' },
  { role: 'user', content: 'Your hand: 12. Dealer shows 10.' },
  { role: 'assistant', content: '', reasoning: '12 against 10: hit.', toolCalls: [{ id: 'call_0', name: 'play', arguments: { action: 'hit' } }] },
  { role: 'tool', content: 'You drew 5: hand 17.', toolCallId: 'call_0', name: 'play' },
  {
    role: 'assistant',
    content: 'Standing.',
    reasoning: '17: check the count, then stand.',
    toolCalls: [
      { id: 'call_1', name: 'count', arguments: {} },
      { id: 'call_2', name: 'play', arguments: { action: 'stick' } },
    ],
  },
  { role: 'tool', content: 'Count: +2', toolCallId: 'call_1', name: 'count' },
  { role: 'tool', content: 'Dealer busts. You win.', toolCallId: 'call_2', name: 'play' },
  { role: 'user', content: 'New hand: 20. Dealer shows 6. Ünïcödé ok? 👍' },
  {
    role: 'assistant',
    content: '',
    reasoning: '20 is strong.',
    toolCalls: [{ id: 'call_3', name: 'play', arguments: { action: 'stick', note: 'é "q"\n' } }],
  },
];

// Written by hand from the template: tools block in the system turn, earlier turns' reasoning
// dropped (they precede the last user query), consecutive tool results in one user turn.
const SYSTEM_WITH_TOOLS =
  '<|im_start|>system\nYou are a blackjack player.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
  '{"type": "function", "function": {"name": "play", "description": "Make a move", "parameters": {"type": "object", "properties": {"action": {"type": "string", "enum": ["hit", "stick"]}}, "required": ["action"]}}}\n' +
  '{"type": "function", "function": {"name": "count", "description": "Running count (informational)", "parameters": {"type": "object", "properties": {}}}}\n' +
  '</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';
const EXPECTED_FULL =
  SYSTEM_WITH_TOOLS +
  '<|im_start|>user\nYour hand: 12. Dealer shows 10.<|im_end|>\n' +
  '<|im_start|>assistant\n<tool_call>\n{"name": "play", "arguments": {"action": "hit"}}\n</tool_call><|im_end|>\n' +
  '<|im_start|>user\n<tool_response>\nYou drew 5: hand 17.\n</tool_response><|im_end|>\n' +
  '<|im_start|>assistant\nStanding.\n<tool_call>\n{"name": "count", "arguments": {}}\n</tool_call>\n' +
  '<tool_call>\n{"name": "play", "arguments": {"action": "stick"}}\n</tool_call><|im_end|>\n' +
  '<|im_start|>user\n<tool_response>\nCount: +2\n</tool_response>\n<tool_response>\nDealer busts. You win.\n</tool_response><|im_end|>\n' +
  '<|im_start|>user\nNew hand: 20. Dealer shows 6. Ünïcödé ok? 👍<|im_end|>\n' +
  '<|im_start|>assistant\n<think>\n20 is strong.\n</think>\n\n' +
  '<tool_call>\n{"name": "play", "arguments": {"action": "stick", "note": "é \\"q\\"\\n"}}\n</tool_call><|im_end|>\n';

test('Qwen3 template renders a multi-turn tool conversation exactly', () => {
  assert.equal(qwen.render(conversation, { tools }), EXPECTED_FULL);
});

test('generation prompt, enable_thinking and the no-tools system turn', () => {
  const prompt = qwen.render(conversation.slice(0, 8), { tools, addGenerationPrompt: true });
  assert.ok(prompt.endsWith('👍<|im_end|>\n<|im_start|>assistant\n'));
  assert.ok(EXPECTED_FULL.startsWith(prompt), 'the last turn follows its prompt');
  const noThinking = qwen.render(conversation.slice(0, 2), { addGenerationPrompt: true, extra: { enable_thinking: false } });
  assert.equal(
    noThinking,
    '<|im_start|>system\nYou are a blackjack player.<|im_end|>\n<|im_start|>user\nYour hand: 12. Dealer shows 10.<|im_end|>\n' +
      '<|im_start|>assistant\n<think>\n\n</think>\n\n',
  );
});

test('<think>: reasoning kept after the last user query, stripped before it, also when inline in content', () => {
  const firstQuery = qwen.render(conversation.slice(0, 7));
  assert.ok(firstQuery.includes('<think>\n12 against 10: hit.\n</think>\n\n<tool_call>'), 'same query: kept');
  assert.ok(firstQuery.includes('<think>\n17: check the count, then stand.\n</think>\n\nStanding.\n<tool_call>'));
  assert.ok(!EXPECTED_FULL.includes('12 against 10'), 'a later user query drops it');
  const inline: Message[] = [
    { role: 'user', content: 'a' },
    { role: 'assistant', content: '<think>\nold plan\n</think>\n\nold answer' },
    { role: 'user', content: 'b' },
    { role: 'assistant', content: '<think>\nnew plan\n</think>\n\nnew answer' },
  ];
  assert.equal(
    qwen.render(inline),
    '<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\nold answer<|im_end|>\n<|im_start|>user\nb<|im_end|>\n' +
      '<|im_start|>assistant\n<think>\nnew plan\n</think>\n\nnew answer<|im_end|>\n',
  );
});

test('Spindle messages and tools become OpenAI-style dicts', () => {
  assert.deepEqual(toHfMessage(conversation[4]), {
    role: 'assistant',
    content: 'Standing.',
    reasoning_content: '17: check the count, then stand.',
    tool_calls: [
      { id: 'call_1', type: 'function', function: { name: 'count', arguments: {} } },
      { id: 'call_2', type: 'function', function: { name: 'play', arguments: { action: 'stick' } } },
    ],
  });
  assert.deepEqual(toHfMessage(conversation[3]), { role: 'tool', content: 'You drew 5: hand 17.', tool_call_id: 'call_0', name: 'play' });
  assert.deepEqual(toHfTool(tools[1]), {
    type: 'function',
    function: { name: 'count', description: 'Running count (informational)', parameters: { type: 'object', properties: {} } },
  });
});

test('template errors are reported as usage errors', () => {
  assert.throws(() => new ChatTemplate('{% if %}', {}, 'my/tokenizer_config.json'), /my\/tokenizer_config\.json: cannot parse the chat template/);
  const raising = new ChatTemplate("{{ raise_exception('only user and assistant roles') }}");
  assert.throws(() => raising.render([{ role: 'user', content: 'x' }]), /rendering failed \(only user and assistant roles\)/);
  assert.throws(() => qwen.render([]), /no messages/);
});
