import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cachedSystemPrompt, systemPrompt } from '../../src/agent/prompt.ts';
import { parseCompletion } from '../../src/agent/parse-tool-calls.ts';
import { COUNTER_TOOLS } from './counter-env.ts';

describe('systemPrompt', () => {
  it('instructions, one compact JSON line per tool inside <tools>, and the call format', () => {
    const prompt = systemPrompt('  Play well.\n', COUNTER_TOOLS.slice(0, 1));
    assert.equal(
      prompt,
      'Play well.\n\n<tools>\n' +
        '{"name":"add","description":"Add n to the total.","parameters":{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":3}},"required":["n"]}}\n' +
        '</tools>\nReply with one tool call:\n<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>',
    );
  });

  it('marks informational tools and says how to use them', () => {
    const prompt = systemPrompt('Play.', COUNTER_TOOLS);
    assert.match(prompt, /"name":"peek".*"informational":true/);
    assert.match(prompt, /informational" only answer a question/);
  });

  it('the format example in the prompt is itself a parsable call shape', () => {
    const example = '<tool_call>{"name": "add", "arguments": {"n": 2}}</tool_call>';
    assert.equal(parseCompletion({ text: example }, COUNTER_TOOLS).error, null);
  });

  it('the cache is keyed on the tools array and the instructions', () => {
    const tools = COUNTER_TOOLS.slice();
    assert.equal(cachedSystemPrompt('A', tools), systemPrompt('A', tools));
    assert.equal(cachedSystemPrompt('B', tools), systemPrompt('B', tools));
    assert.equal(cachedSystemPrompt('B', tools.slice(0, 1)), systemPrompt('B', tools.slice(0, 1)));
  });
});
