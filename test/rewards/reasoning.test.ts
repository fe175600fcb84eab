import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ToolCall } from '../../src/core/messages.ts';
import { reasoningReward, reasoningScore } from '../../src/rewards/reasoning.ts';
import { countWords, reasoningText } from '../../src/rewards/turn-text.ts';
import { makeTurn } from './make-turn.ts';

const buyAcme: ToolCall = { id: 'c', name: 'buy', arguments: { asset: 'ACME', quantity: 5 } };
const o = { minWords: 5, maxWords: 30 };

describe('reasoning text', () => {
  it('prefers the separate reasoning field, then <think>, then the text without tool calls', () => {
    const call = (text: string, reasoning?: string) => makeTurn({ texts: [text], reasoning }).calls[0];
    assert.equal(reasoningText(call('<think>ignored</think>', 'from the server')), 'from the server');
    assert.equal(reasoningText(call('<think> ACME is rising </think>\n<tool_call>{}</tool_call>')), 'ACME is rising');
    assert.equal(reasoningText(call('<think>cut off by max tokens')), 'cut off by max tokens');
    assert.equal(reasoningText(call('Buy ACME now. <tool_call>{"name":"buy"}</tool_call>')), 'Buy ACME now.');
    assert.equal(countWords('  two\nwords '), 2);
    assert.equal(countWords(''), 0);
  });
});

describe('reasoning reward', () => {
  it('gives half for sensible length and half for mentioning the action or asset', () => {
    const score = (text: string, actions: ToolCall[] = [buyAcme]) => reasoningScore(makeTurn({ texts: [text], actions }), o);
    assert.equal(score('<think>ACME has a positive outlook so I will add to it.</think><tool_call>{}</tool_call>'), 1);
    assert.equal(score('<think>The outlook is positive so I will add shares.</think>'), 0.5);
    assert.equal(score('<think>Buying.</think>'), 0.5);
    assert.equal(score('<think>acme</think>'), 0.5);
    assert.equal(score(`<think>${'ACME '.repeat(31)}</think>`), 0.5);
    assert.equal(score('<think></think>'), 0);
    assert.equal(score('<think>Prices look fine today, nothing to report.</think>'), 0.5);
    // A word that only contains the name does not count: "rebuy" is not a mention of "buy".
    assert.equal(score('<think>rebuy</think>'), 0);
    assert.equal(score('<think>I will guess state B after the signals.</think>', [{ id: 'c', name: 'guess_state', arguments: { state: 'B' } }]), 1);
  });

  it('scores 0 without an action, and validates its options', () => {
    const failed = makeTurn({ texts: ['<think>I think ACME should be bought now.</think>'], parseError: { kind: 'no_tool_call', message: 'none', raw: '' } });
    assert.equal(reasoningScore(failed, o), 0);
    assert.equal(reasoningReward(o).name, 'reasoning');
    assert.throws(() => reasoningReward({ minWords: 10, maxWords: 5 }), /minWords <= maxWords/);
  });

  it('reads the last call of the turn (the answer that acted)', () => {
    const turn = makeTurn({ texts: ['<think>look up ACME first, it matters a lot</think>', '<think>short</think>'], actions: [buyAcme] });
    assert.equal(reasoningScore(turn, o), 0);
  });
});
