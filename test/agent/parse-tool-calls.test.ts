import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ToolSpec } from '../../src/core/messages.ts';
import { parseCompletion } from '../../src/agent/parse-tool-calls.ts';

const TOOLS: ToolSpec[] = [
  {
    name: 'take_action',
    description: 'hit or stick',
    parameters: { type: 'object', properties: { action: { type: 'string', enum: ['hit', 'stick'] } }, required: ['action'] },
  },
  { name: 'peek', description: 'look', parameters: { type: 'object', properties: {} }, informational: true },
  {
    name: 'bet',
    description: 'stake',
    parameters: {
      type: 'object',
      properties: { amount: { type: 'integer', minimum: 1, maximum: 100 } },
      required: ['amount'],
      additionalProperties: false,
    },
  },
];

const parse = (text: string, extra: Partial<{ toolCalls: { id?: string; name: string; arguments: string }[]; reasoning: string }> = {}) =>
  parseCompletion({ text, ...extra }, TOOLS);

describe('parseCompletion: well-formed answers', () => {
  it('parses a Hermes <tool_call> block and keeps the text around it as content', () => {
    const r = parse('I will hit.\n<tool_call>\n{"name": "take_action", "arguments": {"action": "hit"}}\n</tool_call>');
    assert.equal(r.error, null);
    assert.deepEqual(r.calls, [{ id: 'call_0', name: 'take_action', arguments: { action: 'hit' } }]);
    assert.equal(r.content, 'I will hit.');
    assert.equal(r.reasoning, null);
  });

  it('parses several calls in order, with ids from the prefix', () => {
    const r = parseCompletion(
      { text: '<tool_call>{"name":"peek","arguments":{}}</tool_call><tool_call>{"name":"bet","arguments":{"amount":5}}</tool_call>' },
      TOOLS,
      { idPrefix: 't3_' },
    );
    assert.deepEqual(
      r.calls.map((c) => [c.id, c.name, c.arguments]),
      [
        ['t3_0', 'peek', {}],
        ['t3_1', 'bet', { amount: 5 }],
      ],
    );
  });

  it('splits <think> reasoning off, also when the template opened the block in the prompt', () => {
    const closed = parse('<think>17 vs 10: stick</think>\n<tool_call>{"name":"take_action","arguments":{"action":"stick"}}</tool_call>');
    assert.equal(closed.reasoning, '17 vs 10: stick');
    assert.equal(closed.calls[0].arguments.action, 'stick');
    const opened = parse('dealer shows 6, so stick\n</think>\n\n<tool_call>{"name":"take_action","arguments":{"action":"stick"}}</tool_call>');
    assert.equal(opened.reasoning, 'dealer shows 6, so stick');
    assert.equal(opened.content, '');
    assert.equal(opened.calls.length, 1);
  });

  it('a tool call inside an unclosed <think> is thinking, not an action', () => {
    const r = parse('<think>maybe <tool_call>{"name":"take_action","arguments":{"action":"hit"}}</tool_call>');
    assert.equal(r.error?.kind, 'no_tool_call');
    assert.match(r.reasoning ?? '', /maybe/);
  });

  it('uses the server tool_calls (JSON-string arguments, server ids) and joins server reasoning', () => {
    const r = parse('', {
      toolCalls: [{ id: 'srv_1', name: 'take_action', arguments: '{"action": "hit"}' }],
      reasoning: 'counted cards',
    });
    assert.equal(r.error, null);
    assert.deepEqual(r.calls, [{ id: 'srv_1', name: 'take_action', arguments: { action: 'hit' } }]);
    assert.equal(r.reasoning, 'counted cards');
  });
});

describe('parseCompletion: tolerated slips', () => {
  const stick = (text: string): void => {
    stickResult(text);
  };
  const stickResult = (text: string) => {
    const r = parse(text);
    assert.equal(r.error, null, `${text} -> ${r.error?.message}`);
    assert.deepEqual(r.calls.map((c) => [c.name, c.arguments]), [['take_action', { action: 'stick' }]]);
    return r;
  };
  it('single quotes', () => stick("<tool_call>{'name': 'take_action', 'arguments': {'action': 'stick'}}</tool_call>"));
  it('trailing commas', () => stick('<tool_call>{"name": "take_action", "arguments": {"action": "stick",},}</tool_call>'));
  it('a code fence inside the tags', () => stick('<tool_call>\n```json\n{"name": "take_action", "arguments": {"action": "stick"}}\n```\n</tool_call>'));
  it('the tags inside a code fence', () => {
    const r = stickResult('```\n<tool_call>{"name": "take_action", "arguments": {"action": "stick"}}</tool_call>\n```');
    assert.equal(r.content, '');
  });
  it('text inside the tags around the JSON', () => stick('<tool_call>call: {"name": "take_action", "arguments": {"action": "stick"}} done</tool_call>'));
  it('a missing </tool_call>', () => stick('<tool_call>{"name": "take_action", "arguments": {"action": "stick"}}'));
  it('arguments as a JSON string', () => stick('<tool_call>{"name": "take_action", "arguments": "{\\"action\\": \\"stick\\"}"}</tool_call>'));
  it('"parameters" for "arguments"', () => stick('<tool_call>{"name": "take_action", "parameters": {"action": "stick"}}</tool_call>'));
  it('the OpenAI {"type":"function","function":{...}} shape', () =>
    stick('<tool_call>{"type": "function", "function": {"name": "take_action", "arguments": {"action": "stick"}}}</tool_call>'));
  it('a bare call object without tags, in a fence', () => {
    const r = stickResult('Sticking.\n```json\n{"name": "take_action", "arguments": {"action": "stick"}}\n```');
    assert.equal(r.content, 'Sticking.');
  });
  it('Python literals', () => {
    const tools: ToolSpec[] = [{ name: 'flag', description: '', parameters: { type: 'object', properties: { on: { type: 'boolean' } } } }];
    const r = parseCompletion({ text: "<tool_call>{'name': 'flag', 'arguments': {'on': True}}</tool_call>" }, tools);
    assert.deepEqual(r.calls[0].arguments, { on: true });
  });
  it('a list of calls inside one block', () => {
    const r = parse('<tool_call>[{"name":"peek","arguments":{}},{"name":"take_action","arguments":{"action":"hit"}}]</tool_call>');
    assert.deepEqual(
      r.calls.map((c) => c.name),
      ['peek', 'take_action'],
    );
  });
  it('missing arguments when none are required', () => {
    const r = parse('<tool_call>{"name": "peek"}</tool_call>');
    assert.deepEqual(r.calls[0].arguments, {});
  });
  it('quotes and apostrophes inside strings survive the repair', () => {
    const tools: ToolSpec[] = [{ name: 'say', description: '', parameters: { type: 'object', properties: { text: { type: 'string' } } } }];
    const r = parseCompletion({ text: `<tool_call>{'name': 'say', 'arguments': {'text': 'he said "it\\'s fine",'},}</tool_call>` }, tools);
    assert.equal(r.error, null, r.error?.message);
    assert.equal(r.calls[0].arguments.text, `he said "it's fine",`);
  });
});

describe('parseCompletion: failures are typed and keep the raw text', () => {
  const fails = (text: string, kind: string, pattern?: RegExp) => {
    const r = parse(text);
    assert.equal(r.error?.kind, kind, `${text}: ${r.error?.message}`);
    assert.equal(r.error?.raw, text);
    assert.deepEqual(r.calls, []);
    if (pattern) assert.match(r.error!.message, pattern);
  };
  it('empty', () => fails('   \n', 'empty'));
  it('prose without a call', () => fails('I think I should hit.', 'no_tool_call'));
  it('JSON that is not a call object stays prose', () => fails('My hand is {"sum": 17}.', 'no_tool_call'));
  it('reasoning only (cut off while thinking)', () => fails('<think>let me count', 'no_tool_call', /reasoning but no tool call/));
  it('a cut-off call', () => fails('<tool_call>{"name": "take_action", "arguments": {"action": "hi', 'malformed_json', /never closes/));
  it('unquoted values are not guessed', () => fails('<tool_call>{"name": "take_action", "arguments": {"action": hit}}</tool_call>', 'malformed_json'));
  it('no JSON in the tags', () => fails('<tool_call>take_action hit</tool_call>', 'malformed_json'));
  it('no name', () => fails('<tool_call>{"arguments": {"action": "hit"}}</tool_call>', 'malformed_json', /name/));
  it('arguments that are not an object', () => fails('<tool_call>{"name": "take_action", "arguments": ["hit"]}</tool_call>', 'malformed_json'));
  it('no fuzzy tool names: wrong case', () => fails('<tool_call>{"name": "Take_Action", "arguments": {"action": "hit"}}</tool_call>', 'unknown_tool', /take_action, peek, bet/));
  it('no fuzzy tool names: near miss', () => fails('<tool_call>{"name": "take_actoin", "arguments": {"action": "hit"}}</tool_call>', 'unknown_tool'));
  it('enum values are exact', () => fails('<tool_call>{"name": "take_action", "arguments": {"action": "Hit"}}</tool_call>', 'bad_arguments', /"hit", "stick"/));
  it('missing required argument', () => fails('<tool_call>{"name": "take_action", "arguments": {}}</tool_call>', 'bad_arguments', /arguments\.action is required/));
  it('integer given as a string', () => fails('<tool_call>{"name": "bet", "arguments": {"amount": "5"}}</tool_call>', 'bad_arguments', /must be an integer/));
  it('out of range', () => fails('<tool_call>{"name": "bet", "arguments": {"amount": 500}}</tool_call>', 'bad_arguments', /<= 100/));
  it('unknown argument with additionalProperties false', () =>
    fails('<tool_call>{"name": "bet", "arguments": {"amount": 5, "all_in": true}}</tool_call>', 'bad_arguments', /all_in is not an argument/));
  it('one bad call fails the whole answer', () =>
    fails('<tool_call>{"name":"peek","arguments":{}}</tool_call><tool_call>{"name":"nope","arguments":{}}</tool_call>', 'unknown_tool'));
  it('server call with unparsable arguments', () => {
    const r = parse('', { toolCalls: [{ name: 'take_action', arguments: '{action: hit' }] });
    assert.equal(r.error?.kind, 'malformed_json');
  });
});
