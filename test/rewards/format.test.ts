import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ToolCall } from '../../src/core/messages.ts';
import { formatReward, formatScore } from '../../src/rewards/format.ts';
import { makeTurn } from './make-turn.ts';

const call = (name: string, args: Record<string, unknown> = {}): ToolCall => ({ id: 'c1', name, arguments: args });

describe('format reward', () => {
  it('scores +1 for one well-formed call, 0 for several, -1 for a parse error', () => {
    assert.equal(formatScore(makeTurn({ texts: ['<tool_call>{"name":"wait","arguments":{}}</tool_call>'], actions: [call('wait')] })), 1);
    assert.equal(formatScore(makeTurn({ actions: [call('wait'), call('buy', { asset: 'ACME', quantity: 1 })] })), 0);
    assert.equal(formatScore(makeTurn({ actions: [] })), 0);
    const bad = makeTurn({ texts: ['<tool_call>{"name": "wait", </tool_call>'], parseError: { kind: 'malformed_json', message: 'Unexpected end', raw: '{"name": "wait", ' } });
    assert.equal(formatScore(bad), -1);
    const none = makeTurn({ texts: ['I would wait.'], parseError: { kind: 'no_tool_call', message: 'no tool call', raw: 'I would wait.' } });
    assert.equal(formatReward().score(none), -1);
    assert.equal(formatReward().name, 'format');
  });
});
