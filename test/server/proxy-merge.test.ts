/** Merging a trajectory's LLM calls into a main conversation and additional histories. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '../../src/core/messages.ts';
import { extendsConversation, mergeCall, type Conversations } from '../../src/server/trajectory-recorder-merge.ts';

const user = (content: string): Message => ({ role: 'user', content });
const said = (content: string): Message => ({ role: 'assistant', content });

describe('mergeCall', () => {
  it('continues the main conversation when a call extends it, else an additional history, else starts one', () => {
    const c: Conversations = { messages: [], additionalHistories: [] };
    assert.equal(mergeCall(c, [user('q1')], said('a1')), 0);
    assert.equal(mergeCall(c, [user('q1'), said('a1'), user('q2')], said('a2')), 0);
    assert.equal(mergeCall(c, [user('sub')], said('s1')), 1);
    assert.equal(mergeCall(c, [user('other')], said('o1')), 2);
    assert.equal(mergeCall(c, [user('sub'), said('s1'), user('more')], said('s2')), 1);
    // A retry of an earlier prompt does not extend the main conversation (it already has an answer).
    assert.equal(mergeCall(c, [user('q1')], said('a1 again')), 3);
    assert.deepEqual(c.messages.map((m) => m.content), ['q1', 'a1', 'q2', 'a2']);
    assert.deepEqual(c.additionalHistories.map((h) => h.map((m) => m.content)), [['sub', 's1', 'more', 's2'], ['other', 'o1'], ['q1', 'a1 again']]);
  });

  it('matches an echoed tool call whatever its id or argument key order, but not other arguments', () => {
    const call: Message = { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } }] };
    const echoed: Message = { role: 'assistant', content: '', toolCalls: [{ id: 'other', name: 'add', arguments: { b: 2, a: 1 } }] };
    const changed: Message = { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 1, b: 3 } }] };
    assert.equal(extendsConversation([user('q'), echoed, user('next')], [user('q'), call]), true);
    assert.equal(extendsConversation([user('q'), changed, user('next')], [user('q'), call]), false);
    assert.equal(extendsConversation([user('q')], []), false);
    assert.equal(extendsConversation([user('q')], [user('q'), call]), false);
  });
});
