/** Rebuilding a chat response from its SSE stream, whatever the byte boundaries. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { recordChoices } from '../../src/server/proxy-completion.ts';
import { SseAccumulator } from '../../src/server/proxy-stream.ts';

const event = (chunk: unknown) => `data: ${JSON.stringify(chunk)}\r\n\r\n`;

const STREAM =
  event({ model: 'm', prompt_token_ids: [1, 2, 3], choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }) +
  event({ choices: [{ index: 0, delta: { content: 'hé' }, token_ids: [10, 11], logprobs: { content: [{ token: 'token_id:10', logprob: -0.5 }, { token: 'token_id:11', logprob: -1 }] } }] }) +
  event({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'add', arguments: '{"a":' } }] }, token_ids: [12] }] }) +
  event({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '1}' } }] }, token_ids: [13], finish_reason: 'tool_calls' }] }) +
  'data: [DONE]\r\n\r\n';

describe('SseAccumulator', () => {
  it('gives the same response for any split of the bytes', () => {
    const bytes = new TextEncoder().encode(STREAM);
    for (const size of [1, 3, 7, bytes.length]) {
      const acc = new SseAccumulator();
      for (let i = 0; i < bytes.length; i += size) acc.push(bytes.slice(i, i + size));
      const [choice] = recordChoices(acc.response(), 'fallback');
      assert.equal(choice.completion.text, 'hé', `split ${size}`);
      assert.deepEqual(choice.completion.completionTokenIds, [10, 11, 12, 13]);
      assert.deepEqual(choice.completion.promptTokenIds, [1, 2, 3]);
      assert.deepEqual(choice.completion.logprobs, [-0.5, -1]);
      assert.equal(choice.completion.finishReason, 'tool_calls');
      assert.equal(choice.completion.modelId, 'm');
      assert.deepEqual(choice.message.toolCalls, [{ id: 'c1', name: 'add', arguments: { a: 1 } }]);
      assert.equal(acc.malformedEvents, 0);
    }
  });

  it('counts events that are not JSON without failing', () => {
    const acc = new SseAccumulator();
    acc.push(new TextEncoder().encode('data: {oops\n\n' + event({ choices: [{ index: 0, delta: { content: 'x' } }] })));
    assert.equal(acc.malformedEvents, 1);
    assert.equal(recordChoices(acc.response(), 'fallback')[0].completion.text, 'x');
  });
});
