/**
 * The streaming hooks `spindle serve` uses, on the served model in process: tokens are reported as
 * they are drawn, an aborted request's sample stops decoding at once while a request batched with it
 * runs to the end, and a token listener that throws ends only its own sample.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadServedModel, type ServedModel } from '../../src/server/served-model.ts';
import { tinyCheckpointDir } from './serve-process.ts';

const messages = [{ role: 'user' as const, content: 'Dealer shows 9. hit or stick?' }];
let model: ServedModel;

describe('served model streaming hooks', () => {
  before(async () => {
    model = await loadServedModel({ model: tinyCheckpointDir(4), threads: 1 });
  });
  after(async () => {
    await model?.policy.close();
  });

  it('stops decoding an aborted request and finishes the one batched with it', async () => {
    const controller = new AbortController();
    let reported = 0;
    let afterAbort = 0;
    const aborted = model.policy.complete({ messages, tools: [], maxTokens: 300, temperature: 1, seed: 1, signal: controller.signal }, {
      onToken: () => {
        if (controller.signal.aborted) afterAbort++;
        if (++reported === 3) controller.abort(new Error('client left'));
      },
    });
    const streamed: number[] = [];
    const other = model.policy.complete({ messages, tools: [], maxTokens: 40, temperature: 0 }, { onToken: (_, t) => streamed.push(t.id) });
    await assert.rejects(aborted, /client left/);
    const [completion] = await other;
    assert.deepEqual(streamed, completion.completionTokenIds, 'every token reported, in order');
    assert.equal(completion.completionTokenIds!.length, 40);
    assert.deepEqual(model.policy.batchSizes.at(-1), 2, 'both requests were one batch');
    assert.equal(reported, 3);
    assert.equal(afterAbort, 0, 'no token of the aborted request was decoded after the abort');
  });

  it('ends only the sample whose token listener throws', async () => {
    let calls = 0;
    const [broken, fine] = await model.policy.complete({ messages, tools: [], n: 2, maxTokens: 20, temperature: 0 }, {
      onToken: (sample) => {
        if (sample === 0 && ++calls === 2) throw new Error('listener failed');
      },
    });
    assert.equal(broken.completionTokenIds!.length, 2);
    assert.equal(fine.completionTokenIds!.length, 20);
  });
});
