/** Streamed text released token by token with the real Qwen3 tokenizer: split UTF-8 characters, stop strings and `<tool_call>` held back. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadTokenizer } from '../../src/model/tokenizer/tokenizer.ts';
import { TextDelta } from '../../src/server/chat-text-delta.ts';
import { QWEN3_TOKENIZER_DIR } from '../model/tokenizer-fixtures.ts';

const tokenizer = loadTokenizer(QWEN3_TOKENIZER_DIR);
/** Ids per decode call, to show that each push decodes a short window, not the whole answer. */
const decodedLengths: number[] = [];
const decode = (ids: number[]) => {
  decodedLengths.push(ids.length);
  return tokenizer.decode(ids, { skipSpecialTokens: true });
};

/** Pushes the ids of `text` one at a time; returns the deltas and the delta `finish(finalText)` adds. */
function stream(text: string, markers: string[], finalText: string): { deltas: string[]; rest: string } {
  const ids = tokenizer.encode(text, { addSpecialTokens: false });
  const delta = new TextDelta(decode, markers);
  const deltas = ids.map((_, i) => delta.push(ids.slice(0, i + 1)));
  return { deltas, rest: delta.finish(finalText) };
}

describe('TextDelta', () => {
  it('never splits a multi-byte character and adds up to the text', () => {
    const text = 'Café naïve — 日本語のテキスト 🎉🃏 done';
    // Byte-level tokens: some ids hold part of a character (the test needs such splits to mean anything).
    const ids = tokenizer.encode(text, { addSpecialTokens: false });
    assert.ok(ids.some((_, i) => decode(ids.slice(0, i + 1)).endsWith('\uFFFD')), 'some prefix ends inside a character');
    const { deltas, rest } = stream(text, [], text);
    for (const d of deltas) assert.ok(!d.includes('\uFFFD'), `delta ${JSON.stringify(d)}`);
    assert.ok(deltas.filter((d) => d.length > 0).length > 5, 'text arrives in many pieces');
    assert.equal(deltas.join('') + rest, text);
  });

  it('decodes a long answer a few ids at a time', () => {
    const text = 'Dealer shows nine; I hold ten and six, so I hit once more. '.repeat(20);
    decodedLengths.length = 0;
    const { deltas, rest } = stream(text, ['STOP'], text);
    assert.equal(deltas.join('') + rest, text);
    assert.ok(decodedLengths.length > 200);
    assert.ok(Math.max(...decodedLengths) <= 4, `a decode call took ${Math.max(...decodedLengths)} ids`);
  });

  it('holds back a stop string and what could become one', () => {
    const text = 'I will hit. STOP and more';
    const final = 'I will hit. '; // the sampler cuts the text before the stop string
    const { deltas, rest } = stream(text, ['STOP'], final);
    const sent = deltas.join('');
    assert.ok(!sent.includes('S'), `sent ${JSON.stringify(sent)}`);
    assert.ok(final.startsWith(sent));
    assert.equal(sent + rest, final);
  });

  it('streams text up to <tool_call> and keeps the call back', () => {
    const text = 'Let me stick.<tool_call>{"name": "stick", "arguments": {}}</tool_call>';
    const { deltas } = stream(text, ['<tool_call>'], text);
    assert.equal(deltas.join(''), 'Let me stick.');
  });
});
