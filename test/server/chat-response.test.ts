/** Completions as OpenAI responses: `<tool_call>` text becomes `tool_calls` when tools were offered; top_logprobs entries. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Completion } from '../../src/core/completion.ts';
import { tokenizerFromJson } from '../../src/model/tokenizer/tokenizer.ts';
import { chatCompletionBody, type ResponseSettings } from '../../src/server/chat-response.ts';
import { blackjackTokenizer } from '../eval/tiny-checkpoint.ts';

const files = blackjackTokenizer();
const tokenizer = tokenizerFromJson(files.tokenizerJson, files.tokenizerConfig);
const tools = [{ name: 'stick', description: 'stop', parameters: { type: 'object', properties: {} } }];

function completionOf(text: string): Completion {
  const ids = tokenizer.encode(text, { addSpecialTokens: false });
  return { text, promptTokenIds: [1, 2, 3], completionTokenIds: ids, logprobs: ids.map(() => -1), tokenIdsExact: true, finishReason: 'stop', modelId: 'tiny', policyVersion: 4 };
}

const settings = (over: Partial<ResponseSettings>): ResponseSettings => ({ id: 'c1', created: 0, model: 'tiny', tools, logprobs: true, tokensAsIds: false, tokenIds: true, tokenizer, ...over });

describe('chat responses', () => {
  const call = completionOf('<tool_call>{"name": "stick", "arguments": {}}</tool_call>');

  it('maps a tool-call completion to tool_calls with finish_reason tool_calls', () => {
    const body = chatCompletionBody([call], settings({}));
    const choice = body.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    assert.deepEqual(choice.message.tool_calls?.map((t) => [t.type, t.function.name, t.function.arguments]), [['function', 'stick', '{}']]);
    assert.deepEqual(choice.token_ids, call.completionTokenIds);
    assert.deepEqual(body.prompt_token_ids, [1, 2, 3]);
    assert.equal(body.policy_version, 4);
  });

  it('keeps the text when no tools were offered or the call names an unknown tool', () => {
    assert.equal(chatCompletionBody([call], settings({ tools: [] })).choices[0].message.content, call.text);
    const unknown = completionOf('<tool_call>{"name": "fold", "arguments": {}}</tool_call>');
    const choice = chatCompletionBody([unknown], settings({})).choices[0];
    assert.equal(choice.finish_reason, 'stop');
    assert.equal(choice.message.tool_calls, undefined);
  });

  it('adds top_logprobs entries with token text and bytes', () => {
    const plain = completionOf('I stick.');
    const ids = plain.completionTokenIds!;
    const tops = ids.map((id) => ({ ids: [id, (id + 1) % tokenizer.vocabSize], logprobs: [-0.5, -2] }));
    const entries = chatCompletionBody([plain], settings({ tools: [] }), [tops]).choices[0].logprobs!.content;
    assert.equal(entries.length, ids.length);
    entries.forEach((e, i) => {
      assert.deepEqual(e.top_logprobs.map((t) => t.logprob), [-0.5, -2]);
      assert.equal(e.top_logprobs[0].token, e.token);
      assert.deepEqual(e.top_logprobs[0].bytes, [...tokenizer.tokenBytes(ids[i])]);
    });
    // Without tops the alternatives are empty.
    assert.deepEqual(chatCompletionBody([plain], settings({ tools: [] })).choices[0].logprobs!.content[0].top_logprobs, []);
  });
});
