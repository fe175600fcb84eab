import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ChatTemplate } from '../../src/model/chat-template.ts';
import { builtinEnvs } from '../../src/envs/builtin.ts';
import { buildTokenizerCorpus } from '../../src/train/tokenizer-corpus.ts';
import { DEFAULT_ADDED_TOKENS, trainDefaultTokenizer, writeTokenizerFiles } from '../../src/model/tokenizer/default-tokenizer.ts';
import { loadTokenizer, tokenizerFromJson } from '../../src/model/tokenizer/tokenizer.ts';
import { trainByteLevelBpe } from '../../src/model/tokenizer/train-bpe.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

const corpus = [
  'You play blackjack against a dealer. Each turn call hit to take a card or stick to stop.',
  '<|im_start|>user\nYour hand: 12 (no usable ace). Dealer shows 10.<|im_end|>\n<|im_start|>assistant\n<think>\nhit\n</think>\n\n' +
    '<tool_call>\n{"name": "hit", "arguments": {}}\n</tool_call><|im_end|>\n',
  'The dealer stands on 17. The dealer busts. You win. The dealer wins. Blackjackblackjackblackjack!',
].flatMap((text) => Array.from({ length: 5 }, () => text));

const files = trainDefaultTokenizer(corpus);
const tok = tokenizerFromJson(files.tokenizerJson, files.tokenizerConfig, 'default');

test('every byte is a token, added tokens are single ids, eos/pad are ChatML', () => {
  for (const token of DEFAULT_ADDED_TOKENS) assert.equal(tok.encode(token.content).length, 1, token.content);
  assert.equal(tok.eosTokenId, tok.tokenToId('<|im_end|>'));
  assert.equal(tok.padTokenId, tok.tokenToId('<|endoftext|>'));
  const merges = (files.tokenizerJson.model as { merges: unknown[] }).merges.length;
  assert.equal(tok.vocabSize, 256 + merges + DEFAULT_ADDED_TOKENS.length);
  for (let b = 0; b < 256; b++) assert.deepEqual(Array.from(tok.tokenBytes(b)), [b]);
});

test('a tool call is its template text in single tokens: the call scaffolding, the name, the arguments', () => {
  const call = '<tool_call>\n{"name": "hit", "arguments": {}}\n</tool_call>';
  const pieces = tok.encode(call).map((id) => tok.decode([id]));
  assert.deepEqual(pieces, ['<tool_call>', '\n{"name": "', 'hit', '", "arguments": ', '{}}\n', '</tool_call>']);
  // A name the corpus never had is spelled in bytes between the same scaffolding tokens.
  const other = tok.encode('<tool_call>\n{"name": "zq", "arguments": {}}\n</tool_call>').map((id) => tok.decode([id]));
  assert.deepEqual(other.slice(0, 2), ['<tool_call>', '\n{"name": "']);
  assert.equal(other.join(''), '<tool_call>\n{"name": "zq", "arguments": {}}\n</tool_call>');
  assert.ok(other.includes('", "arguments": '));
});

test('any text round trips exactly, also text the corpus never had', () => {
  const texts = [
    'Dealer shows 10.',
    '日本語 😀 👩‍👩‍👧 Ωmega naïve e\u0301',
    '\u0000\u0001\u007f tabs\t\r\n  spaces  ',
    '{"name": "bet", "arguments": {"fraction": 0.125}}',
    '<tools>\n{"a": 1}\n</tools><|im_start|>x<|im_end|>',
  ];
  for (const text of texts) assert.equal(tok.decode(tok.encode(text)), text, JSON.stringify(text));
  assert.equal(tok.decode(tok.encode('<think>a</think>b<|im_end|>'), { skipSpecialTokens: true }), '<think>a</think>b');
});

test('merges learn frequent words, never longer than 8 bytes, never across added tokens', () => {
  const vocab = (files.tokenizerJson.model as { vocab: Record<string, number> }).vocab;
  for (const id of Object.values(vocab)) assert.ok(tok.tokenBytes(id).length <= 8, `token ${id}`);
  assert.deepEqual(tok.encode(' dealer'), [vocab['Ġdealer']]);
  assert.ok(!Object.keys(vocab).some((t) => t.includes('im_end') || t.includes('tool_call')), 'added tokens stay out of merges');
  // "Blackjackblackjackblackjack" is one 27-byte word: it can only be covered by pieces of <= 8 bytes.
  const pieces = tok.encode('Blackjackblackjackblackjack').map((id) => tok.tokenBytes(id).length);
  assert.ok(pieces.length >= 4 && pieces.every((n) => n <= 8));
});

test('the vocabulary size is a hard cap and training is deterministic', () => {
  const small = trainByteLevelBpe(corpus, { vocabSize: 300, addedTokens: DEFAULT_ADDED_TOKENS });
  assert.equal(small.model.merges.length, 300 - 256 - DEFAULT_ADDED_TOKENS.length);
  assert.equal(tokenizerFromJson(small.tokenizerJson, {}).vocabSize, 300);
  assert.deepEqual(trainDefaultTokenizer(corpus), files);
  assert.throws(() => trainByteLevelBpe(corpus, { vocabSize: 200, addedTokens: DEFAULT_ADDED_TOKENS }), new RegExp(`vocabSize must be an integer from ${256 + DEFAULT_ADDED_TOKENS.length} `));
});

test('saved files load through the same loader as a real checkpoint, with a ChatML tool template', () => {
  const dir = tempDir('spindle-tok-');
  writeTokenizerFiles(dir, files);
  const loaded = loadTokenizer(dir);
  const text = 'Your hand: 12. <tool_call>\n{"name": "hit"}\n</tool_call>';
  assert.deepEqual(loaded.encode(text), tok.encode(text));
  const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
  assert.equal(json.model.type, 'BPE');
  assert.equal(json.decoder.type, 'ByteLevel');
  assert.equal(json.added_tokens.length, DEFAULT_ADDED_TOKENS.length);
  const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
  const template = new ChatTemplate(config.chat_template, loaded.specialTokensMap);
  const rendered = template.render(
    [
      { role: 'system', content: 'Play.' },
      { role: 'user', content: 'Hand 12.' },
      { role: 'assistant', content: '', reasoning: 'low hand', toolCalls: [{ id: 'c', name: 'hit', arguments: {} }] },
      { role: 'tool', content: 'Hand 19.', toolCallId: 'c', name: 'hit' },
    ],
    { tools: [{ name: 'hit', description: 'Take a card', parameters: { type: 'object', properties: {} } }], addGenerationPrompt: true },
  );
  assert.equal(
    rendered,
    '<|im_start|>system\nPlay.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
      'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
      '{"type": "function", "function": {"name": "hit", "description": "Take a card", "parameters": {"type": "object", "properties": {}}}}\n' +
      '</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
      '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' +
      '<|im_start|>user\nHand 12.<|im_end|>\n' +
      '<|im_start|>assistant\n<think>\nlow hand\n</think>\n\n<tool_call>\n{"name": "hit", "arguments": {}}\n</tool_call><|im_end|>\n' +
      '<|im_start|>user\n<tool_response>\nHand 19.\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
  );
  const ids = loaded.encode(rendered);
  assert.equal(loaded.decode(ids), rendered);
  assert.equal(ids.filter((id) => id === loaded.tokenToId('<|im_start|>')).length, 5);
});

test('the corpus plays every registered env and trains a tokenizer from it', async () => {
  const texts = await buildTokenizerCorpus({ episodesPerEnv: 2, maxSteps: 4 });
  assert.ok(builtinEnvs.length > 0);
  for (const spec of builtinEnvs) {
    const parsed = spec.options.safeParse({});
    if (parsed.success) assert.ok(texts.includes(spec.instructions(parsed.data)), `${spec.name} instructions`);
  }
  assert.ok(texts.some((t) => t.includes('<tool_call>\n{"name": ') && t.includes('<tool_response>')));
  const trained = trainDefaultTokenizer(texts);
  const env = tokenizerFromJson(trained.tokenizerJson, trained.tokenizerConfig);
  assert.ok(env.vocabSize <= 2048);
  const chars = texts.reduce((n, t) => n + t.length, 0);
  const tokens = texts.reduce((n, t) => n + env.encode(t).length, 0);
  assert.ok(chars / tokens > 2.5, `compression ${chars / tokens} chars/token`);
  assert.deepEqual(await buildTokenizerCorpus({ episodesPerEnv: 2, maxSteps: 4 }), texts, 'deterministic');
});

test('numbers are pre-tokenized in runs of up to three digits with one leading space, so " 16" can be one token', async () => {
  const { byteLevelPreTokenizer } = await import('../../src/model/tokenizer/tokenizer-json.ts');
  const split = byteLevelPreTokenizer([]);
  // Byte-level strings: 'Ġ' is the space.
  assert.deepEqual(split('sum 16, dealer 1234.'), ['sum', 'Ġ16', ',', 'Ġdealer', 'Ġ123', '4', '.']);
  const numbers = trainDefaultTokenizer(Array.from({ length: 20 }, () => 'Your hand: 10, 6 (sum 16). Dealer shows: 10.'), { vocabSize: 300 });
  const tokenizer = tokenizerFromJson(numbers.tokenizerJson, numbers.tokenizerConfig);
  const ids = tokenizer.encode('sum 16');
  assert.deepEqual(ids.map((id) => tokenizer.decode([id])), ['sum', ' 16']);
});

test("digits 'single': every digit is its own pre-token (the first keeps the space), and the trained tokenizer never joins two", async () => {
  const { byteLevelPreTokenizer } = await import('../../src/model/tokenizer/tokenizer-json.ts');
  const split = byteLevelPreTokenizer([], 'single');
  assert.deepEqual(split('p 0.63, b 12.'), ['p', 'Ġ0', '.', '6', '3', ',', 'Ġb', 'Ġ1', '2', '.']);
  const corpus = Array.from({ length: 20 }, () => 'A bet wins with probability 0.63 and then pays 1.5 times the stake; 0.63 again.');
  const single = trainDefaultTokenizer(corpus, { vocabSize: 300, digits: 'single' });
  const tokenizer = tokenizerFromJson(single.tokenizerJson, single.tokenizerConfig);
  const pieces = (t: typeof tokenizer, text: string) => t.encode(text).map((id) => t.decode([id]));
  assert.deepEqual(pieces(tokenizer, ' 0.63 pays 1.5'), [' 0', '.', '6', '3', ' pay', 's', ' 1', '.', '5']);
  // The default keeps the runs: "63" is one token there.
  const runs = tokenizerFromJson(trainDefaultTokenizer(corpus, { vocabSize: 300 }).tokenizerJson, single.tokenizerConfig);
  assert.deepEqual(pieces(runs, ' 0.63 pays 1.5'), [' 0', '.', '63', ' pay', 's', ' 1', '.', '5']);
});
