/**
 * The LLM judge in the recording proxy: `POST /groups/{taskId}/judge` scores a task's recorded group
 * relative to each other and stores part `judge` (finishing trajectories not rewarded yet). With a
 * scripted judge (a Policy answering fixed text) in process; an invalid answer after the retries
 * leaves the group unscored with no part invented. Then `spindle proxy --judge openai:MODEL` as a real
 * process, the judge a loopback OpenAI-compatible server answering fixed JSON.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { Completion } from '../../src/core/completion.ts';
import type { Policy, PolicyRequest } from '../../src/policy/policy.ts';
import { judgeRewardPart } from '../../src/rewards/judge.ts';
import { buildProxy, startProxy, type RunningProxy } from '../../src/server/proxy.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import { startProxyProcess } from '../server/fixtures/proxy-process.ts';
import { startToyUpstream, type ToyUpstream } from '../server/fixtures/proxy-upstream.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

const scoresJson = (scores: number[]) => JSON.stringify({ scores: scores.map((score, i) => ({ trajectory_id: String(i + 1), explanation: 'x', score })) });

function scriptedJudge(): Policy & { requests: PolicyRequest[]; answer: string } {
  const judge = {
    name: 'scripted-judge',
    contextLength: null,
    requests: [] as PolicyRequest[],
    answer: '',
    async complete(request: PolicyRequest): Promise<Completion[]> {
      judge.requests.push(request);
      return [{ text: judge.answer, promptTokenIds: null, completionTokenIds: null, logprobs: null, tokenIdsExact: false, finishReason: 'stop', modelId: 'judge', policyVersion: 0 }];
    },
  };
  return judge;
}

async function call(proxyUrl: string, trajectory: string, task: string, content: string): Promise<void> {
  const client = new OpenAI({ baseURL: `${proxyUrl}/t/${trajectory}/task/${task}/v1`, apiKey: 'k' });
  await client.chat.completions.create({ model: 'toy', messages: [{ role: 'user', content }], max_tokens: 8 });
}

const post = (url: string, body?: unknown) =>
  fetch(url, { method: 'POST', ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });

describe('LLM judge in the proxy', () => {
  let upstream: ToyUpstream;
  let store: Store;
  let proxy: RunningProxy;
  const judge = scriptedJudge();
  const runId = 'proxy-judge';

  before(async () => {
    upstream = await startToyUpstream();
    store = await openStore(join(tempDir('spindle-judge-'), 'spindle.db'));
    await store.createRun({ id: runId, kind: 'proxy', env: 'proxy', envOptions: {}, policy: upstream.url, config: {}, status: 'running', createdAt: new Date().toISOString(), finishedAt: null, summary: null });
    proxy = await startProxy({ upstream: upstream.url, store, runId, port: 0, judge: judgeRewardPart({ judge, maxRetries: 1 }) });
  });
  after(async () => {
    await proxy?.close();
    await store?.close();
    await upstream?.close();
  });

  it('scores a task group: part judge on each trajectory, rewarded ones keep their parts, the others are finished', async () => {
    for (const id of ['a1', 'a2', 'a3']) await call(proxy.url, id, 'A', `question ${id}`);
    assert.equal((await post(`${proxy.url}/trajectories/a1/reward`, { reward: 0.5, parts: { correct: 0.5 } })).status, 200);
    judge.answer = scoresJson([0.9, 0.5, 0.1]);
    const res = await post(`${proxy.url}/groups/A/judge`);
    const body = (await res.json()) as { status: string; trajectories: { id: string }[] };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.status, 'scored');
    assert.deepEqual(body.trajectories.map((t) => t.id), ['a1', 'a2', 'a3']);
    assert.equal(judge.requests.length, 1);
    assert.match(judge.requests[0].messages[1].content, /question a2/);

    const [a1, a2, a3] = await Promise.all(['a1', 'a2', 'a3'].map((id) => store.getTrajectory(id)));
    assert.deepEqual(a1?.rewardParts, { correct: 0.5, judge: 0.9 });
    assert.equal(a1?.reward, 1.4);
    assert.deepEqual(a2?.rewardParts, { judge: 0.5 });
    assert.equal(a2?.status, 'completed');
    assert.equal(a2?.turns.at(-1)?.reward, 0.5);
    assert.equal(a3?.reward, 0.1);

    const again = await post(`${proxy.url}/groups/A/judge`);
    assert.equal(again.status, 409, 'a group is judged once');
    assert.equal(judge.requests.length, 1);
  });

  it('leaves a group unscored after invalid answers: no part, trajectories as they were', async () => {
    for (const id of ['b1', 'b2']) await call(proxy.url, id, 'B', `question ${id}`);
    judge.answer = 'The first one is better.';
    const before = judge.requests.length;
    const res = await post(`${proxy.url}/groups/B/judge`);
    const body = (await res.json()) as { status: string; reason: string };
    assert.equal(res.status, 200);
    assert.equal(body.status, 'unscored');
    assert.match(body.reason, /no valid answer in 2 tries/);
    assert.equal(judge.requests.length - before, 2);
    for (const id of ['b1', 'b2']) {
      const t = await store.getTrajectory(id);
      assert.deepEqual(t?.rewardParts, {});
      assert.equal(t?.reward, 0);
      assert.equal(t?.status, 'failed', 'still awaiting its reward');
      assert.equal(t?.metrics.judge_unscored, 1);
    }
    await call(proxy.url, 'b1', 'B', 'one more question');
    await proxy.recorder.flush();
    const b1 = await store.getTrajectory('b1');
    assert.equal(b1?.turns.length, 2);
    assert.equal(b1?.metrics.judge_unscored, 1, 'a later call keeps the mark');
  });

  it('answers 404 for an unknown task, and without a judge', async () => {
    assert.equal((await post(`${proxy.url}/groups/nope/judge`)).status, 404);
    const plain = buildProxy({ upstream: upstream.url, store, runId });
    const res = await plain.inject({ method: 'POST', url: '/groups/A/judge' });
    assert.equal(res.statusCode, 404);
    assert.match(res.body, /--judge POLICY/);
    await plain.close();
  });
});

describe('spindle proxy --judge openai:MODEL', () => {
  let judgeServer: Server;
  let judgeUrl: string;
  let upstream: ToyUpstream;

  before(async () => {
    upstream = await startToyUpstream();
    judgeServer = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({
          id: 'j', object: 'chat.completion', created: 0, model: 'judge-model',
          choices: [{ index: 0, message: { role: 'assistant', content: scoresJson([0.25, 0.75]) }, finish_reason: 'stop', logprobs: null }],
        }));
      });
    });
    await new Promise<void>((resolve) => judgeServer.listen(0, '127.0.0.1', resolve));
    judgeUrl = `http://127.0.0.1:${(judgeServer.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    await upstream?.close();
    await new Promise<void>((resolve) => judgeServer.close(() => resolve()));
  });

  it('scores a group through a remote judge, weighted by --judge-weight', async () => {
    const proxy = await startProxyProcess(upstream.url, ['--judge', 'openai:judge-model', '--base-url', judgeUrl, '--judge-weight', '2']);
    try {
      for (const id of ['c1', 'c2']) await call(proxy.url, id, 'C', `question ${id}`);
      const res = await post(`${proxy.url}/groups/C/judge`);
      const body = (await res.json()) as { status: string; trajectories: { reward: number; rewardParts: Record<string, number> }[] };
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.status, 'scored');
      assert.deepEqual(body.trajectories.map((t) => t.rewardParts), [{ judge: 0.25 }, { judge: 0.75 }]);
      assert.deepEqual(body.trajectories.map((t) => t.reward), [0.5, 1.5]);
    } finally {
      await proxy.stop();
    }
  });
});
