/** An upstream response → recorded completions: where token ids come from, and when they are missing. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { recordChoices } from '../../src/server/proxy-completion.ts';

describe('recordChoices', () => {
  it('reads vLLM token ids, orders choices by index and keeps the policy version', () => {
    const choices = recordChoices(
      {
        model: 'served',
        policy_version: 4,
        prompt_token_ids: [5, 6],
        choices: [
          { index: 1, message: { content: 'b' }, finish_reason: 'length', token_ids: [9], logprobs: { content: [{ token: 'b', logprob: -2 }] } },
          { index: 0, message: { content: null, tool_calls: [{ id: 't', function: { name: 'f', arguments: '{"x":1}' } }] }, finish_reason: 'tool_calls', token_ids: [7, 8] },
        ],
      },
      'asked',
    );
    assert.deepEqual(choices.map((c) => c.completion.completionTokenIds), [[7, 8], [9]]);
    assert.deepEqual(choices.map((c) => c.completion.finishReason), ['tool_calls', 'length']);
    assert.deepEqual(choices.map((c) => c.completion.tokenIdsExact), [true, true]);
    assert.equal(choices[0].completion.logprobs, null);
    assert.deepEqual(choices[1].completion.logprobs, [-2]);
    assert.equal(choices[0].completion.policyVersion, 4);
    assert.equal(choices[0].completion.modelId, 'served');
    assert.deepEqual(choices[0].completion.toolCalls, [{ id: 't', name: 'f', arguments: '{"x":1}' }]);
    assert.deepEqual(choices[0].message.toolCalls, [{ id: 't', name: 'f', arguments: { x: 1 } }]);
  });

  it('takes ids from `token_id:N` logprob tokens, and leaves them null otherwise', () => {
    const [fromTokens] = recordChoices({ choices: [{ message: { content: 'hi' }, logprobs: { content: [{ token: 'token_id:3', logprob: -1 }, { token: 'token_id:4', logprob: -0.5 }] } }] }, 'm');
    assert.deepEqual(fromTokens.completion.completionTokenIds, [3, 4]);
    assert.equal(fromTokens.completion.promptTokenIds, null);
    assert.equal(fromTokens.completion.tokenIdsExact, false);
    assert.equal(fromTokens.completion.modelId, 'm');
    const [plain] = recordChoices({ choices: [{ message: { content: 'hi' }, logprobs: { content: [{ token: 'hi', logprob: -1 }] } }] }, 'm');
    assert.equal(plain.completion.completionTokenIds, null);
    assert.deepEqual(plain.completion.logprobs, [-1]);
    assert.equal(plain.completion.tokenIdsExact, false);
  });
});
