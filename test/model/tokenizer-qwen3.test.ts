import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadTokenizer } from '../../src/model/tokenizer/tokenizer.ts';
import { QWEN3_TOKENIZER_DIR } from './tokenizer-fixtures.ts';

const tok = loadTokenizer(QWEN3_TOKENIZER_DIR);

test('Qwen3 ids match known sequences', () => {
  // Checked against an independent reference (Python `regex` + the file's merges, see the report) and the vocab.
  assert.deepEqual(tok.encode('Hello world'), [9707, 1879]);
  assert.equal(tok.tokenToId('Hello'), 9707);
  assert.equal(tok.tokenToId('Ġworld'), 1879);
  assert.deepEqual(tok.encode('Hello, world!'), [9707, 11, 1879, 0]);
  // The (?i:'s|'m...) contraction group of Qwen's split regex is case-insensitive.
  assert.deepEqual(tok.encode("I'M HERE it's"), [40, 27603, 19249, 432, 594]);
  assert.equal(tok.idToToken(27603), "'M");
  // Digits are split one by one.
  assert.deepEqual(tok.encode('2025'), ['2', '0', '2', '5'].map((d) => tok.tokenToId(d)));
  assert.deepEqual(tok.encode('def f(x):\n    return x**2  \n\n\n'), [750, 282, 2075, 982, 262, 470, 856, 334, 17, 79226]);
});

test('chat special tokens encode as single ids', () => {
  const expected: Record<string, number> = {
    '<|endoftext|>': 151643,
    '<|im_start|>': 151644,
    '<|im_end|>': 151645,
    '<tool_call>': 151657,
    '</tool_call>': 151658,
    '<tool_response>': 151665,
    '</tool_response>': 151666,
    '<think>': 151667,
    '</think>': 151668,
  };
  for (const [token, id] of Object.entries(expected)) {
    assert.deepEqual(tok.encode(token), [id], token);
    assert.equal(tok.tokenToId(token), id, token);
  }
  const ids = tok.encode('<|im_start|>user\nhi<|im_end|>\n<think>\nx</think><tool_call>{"a":1}</tool_call>');
  assert.deepEqual(ids, [151644, 872, 198, 6023, 151645, 198, 151667, 198, 87, 151668, 151657, 4913, 64, 788, 16, 92, 151658]);
});

test('eos, pad, bos and vocabulary size come from the files', () => {
  assert.equal(tok.eosTokenId, 151645);
  assert.equal(tok.padTokenId, 151643);
  assert.equal(tok.bosTokenId, null);
  assert.equal(tok.vocabSize, 151669);
  assert.deepEqual(tok.specialTokensMap, { eos_token: '<|im_end|>', pad_token: '<|endoftext|>' });
  assert.equal(tok.addedTokens.length, 26);
  assert.equal(tok.addedTokens.find((t) => t.content === '<think>')?.special, false);
  assert.equal(tok.addedTokens.find((t) => t.content === '<|im_end|>')?.special, true);
});

test('varied text round trips through encode and decode', () => {
  const texts = [
    '  leading spaces and trailing   ',
    'tabs\tand\r\nCRLF\n\n\nnewlines',
    '😀 café 日本語 👩‍👩‍👧 naïve Ωmega straße',
    'Русский текст и العربية و हिन्दी',
    'emoji 🧑🏽‍💻🏳️‍🌈 flags 🇫🇷 𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
    'function add(a: number, b: number): number {\n\treturn a + b; // sum\n}\n',
    '{"name": "bet", "arguments": {"fraction": 0.25, "side": "heads"}}',
    'a\u00a0b\u2003c\u200bd \u0000\u0001\u007f',
    '<|im_start|>assistant\n<think>\nplan\n</think>\n\nok<|im_end|>\n',
  ];
  for (const text of texts) assert.equal(tok.decode(tok.encode(text)), text, JSON.stringify(text));
  // NFC normalisation: a decomposed é encodes as the composed one.
  assert.deepEqual(tok.encode('e\u0301'), tok.encode('\u00e9'));
});

test('decode can skip special tokens; non-special added tokens stay', () => {
  const ids = tok.encode('<|im_start|>assistant\n<think>\nx\n</think>\n\nhi<|im_end|>');
  assert.equal(tok.decode(ids, { skipSpecialTokens: true }), 'assistant\n<think>\nx\n</think>\n\nhi');
});

test('tokenBytes gives each token its raw bytes, also halves of UTF-8 characters', () => {
  const text = 'naïve 👩‍👩‍👧 日本語<think>';
  const ids = tok.encode(text);
  const parts = ids.map((id) => tok.tokenBytes(id));
  const joined = Buffer.concat(parts);
  assert.deepEqual(new Uint8Array(joined), new TextEncoder().encode(text));
  assert.ok(
    parts.some((p) => new TextDecoder('utf-8', { fatal: false }).decode(p).includes('\ufffd')),
    'some token holds an incomplete UTF-8 character',
  );
  assert.deepEqual(tok.tokenBytes(151667), new TextEncoder().encode('<think>'));
  assert.throws(() => tok.tokenBytes(10_000_000), /not in the vocabulary/);
});
