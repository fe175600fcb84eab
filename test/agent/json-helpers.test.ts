import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkArguments } from '../../src/agent/check-arguments.ts';
import { endOfBalanced, parseLenientJson, repairJson } from '../../src/agent/lenient-json.ts';
import { splitReasoning } from '../../src/agent/split-reasoning.ts';

describe('parseLenientJson', () => {
  it('strict JSON passes through untouched', () => {
    assert.deepEqual(parseLenientJson('{"a": [1, 2], "b": "x, }"}'), { ok: true, value: { a: [1, 2], b: 'x, }' } });
  });
  it('repairs only outside strings', () => {
    assert.equal(repairJson(`{'a': 'it\\'s', "b": "True, ]", c: None,}`), `{"a": "it's", "b": "True, ]", c: null}`);
  });
  it('reports the original error when the repair does not help', () => {
    const r = parseLenientJson('{"a": hit}');
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.message, /JSON/);
  });
});

describe('endOfBalanced', () => {
  it('skips brackets inside strings of either quote', () => {
    const text = `x {"a": "}", 'b': '{'} tail`;
    assert.equal(text.slice(2, endOfBalanced(text, 2)), `{"a": "}", 'b': '{'}`);
  });
  it('is -1 for an object that never closes', () => assert.equal(endOfBalanced('{"a": {"b": 1}', 0), -1));
});

describe('splitReasoning', () => {
  it('no tags: content only', () => assert.deepEqual(splitReasoning(' hi '), { content: 'hi', reasoning: null }));
  it('several blocks are joined', () =>
    assert.deepEqual(splitReasoning('<think>a</think>x<think>b</think>y'), { content: 'xy', reasoning: 'a\n\nb' }));
  it('an empty block (Qwen3 no-think) gives empty reasoning', () =>
    assert.deepEqual(splitReasoning('<think>\n\n</think>\n\nok'), { content: 'ok', reasoning: '' }));
  it('unclosed block: all reasoning', () => assert.deepEqual(splitReasoning('<think>hmm'), { content: '', reasoning: 'hmm' }));
});

describe('checkArguments', () => {
  const schema = {
    type: 'object',
    properties: {
      n: { type: 'integer', minimum: 1, maximum: 3 },
      p: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
      tags: { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 2 },
      mode: { enum: ['a', 'b'] },
      nested: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      maybe: { type: ['string', 'null'] },
    },
    required: ['n'],
  };
  const cases: [unknown, RegExp | null][] = [
    [{ n: 2 }, null],
    [{ n: 2, extra: 1 }, null], // additionalProperties not false: allowed
    [{}, /arguments\.n is required/],
    [{ n: 2.5 }, /arguments\.n must be an integer, got the number 2.5/],
    [{ n: 0 }, />= 1/],
    [{ n: 4 }, /<= 3/],
    [{ n: 1, p: 0 }, /> 0/],
    [{ n: 1, p: 1 }, /< 1/],
    [{ n: 1, p: Infinity }, /must be a number/],
    [{ n: 1, tags: ['a', ''] }, /arguments\.tags\[1\] must have at least 1 characters/],
    [{ n: 1, tags: ['a', 'b', 'c'] }, /at most 2 items/],
    [{ n: 1, mode: 'c' }, /one of "a", "b"/],
    [{ n: 1, nested: {} }, /arguments\.nested\.ok is required/],
    [{ n: 1, nested: { ok: 'yes' } }, /must be a boolean/],
    [{ n: 1, maybe: null }, null],
    [{ n: 1, maybe: 3 }, /must be a string or a null/],
    [[1], /arguments must be an object, got an array/],
    [{ toString: 1, n: 1 }, null],
  ];
  for (const [value, expected] of cases) {
    it(`${JSON.stringify(value)} -> ${expected ?? 'ok'}`, () => {
      const problem = checkArguments(schema, value);
      if (expected === null) assert.equal(problem, null);
      else assert.match(problem ?? '', expected);
    });
  }
});
