/**
 * `spindle play --judge openai:MODEL` as a real process: the judge is a loopback OpenAI-compatible
 * server answering fixed JSON, or junk (the groups stay unscored and are reported so); the rubric
 * file reaches the judge's prompt; bad judge flags are refused naming the flag.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BIN, scratchDir } from '../cli/run-cli.ts';

function spindle(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, CI: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('spindle play --judge', () => {
  let server: Server;
  let baseUrl: string;
  let answer = '';
  const prompts: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (d) => (raw += d));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        // The policy asks GET /v1/models for the context length first.
        if (req.method !== 'POST') return res.end(JSON.stringify({ object: 'list', data: [] }));
        prompts.push(JSON.stringify(JSON.parse(raw).messages));
        res.end(JSON.stringify({ id: 'j', object: 'chat.completion', created: 0, model: 'judge-model', choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop', logprobs: null }] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const base = ['play', '--env', 'blackjack', '--policy', 'random', '--episodes', '4', '--group-size', '2', '--json'];

  it('adds the judge part to every episode and uses the rubric file', async () => {
    const dir = scratchDir();
    writeFileSync(join(dir, 'rubric.txt'), 'RUBRIC-MARKER: prefer wins.');
    answer = JSON.stringify({ scores: [{ trajectory_id: '1', explanation: 'a', score: 0.2 }, { trajectory_id: '2', explanation: 'b', score: 0.6 }] });
    prompts.length = 0;
    const r = await spindle([...base, '--judge', 'openai:judge-model', '--base-url', baseUrl, '--judge-rubric', 'rubric.txt', '--db', join(dir, 'db.sqlite')], dir);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as { meanRewardParts: Record<string, number>; judge: string; judgeUnscoredEpisodes: number };
    assert.equal(prompts.length, 2, 'one judge call per group');
    assert.ok(prompts.every((p) => p.includes('RUBRIC-MARKER')));
    assert.ok(Math.abs(report.meanRewardParts.judge - 0.4) < 1e-12);
    assert.equal(report.judge, 'openai:judge-model');
    assert.equal(report.judgeUnscoredEpisodes, 0);
  });

  it('reports the episodes of groups the judge could not score', async () => {
    const dir = scratchDir();
    answer = 'no idea';
    const r = await spindle([...base, '--judge', 'openai:judge-model', '--base-url', baseUrl, '--db', join(dir, 'db.sqlite')], dir);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as { meanRewardParts: Record<string, number>; judgeUnscoredEpisodes: number };
    assert.equal(report.meanRewardParts.judge, undefined);
    assert.equal(report.judgeUnscoredEpisodes, 4);
  });

  it('refuses a scripted judge, a missing rubric and a rubric without --judge', async () => {
    const dir = scratchDir();
    const scripted = await spindle([...base, '--judge', 'random', '--db', join(dir, 'db.sqlite')], dir);
    assert.equal(scripted.code, 2);
    assert.match(scripted.stderr, /--judge "random": needs an LLM policy/);
    const missing = await spindle([...base, '--judge', 'openai:m', '--base-url', baseUrl, '--judge-rubric', 'nope.txt', '--db', join(dir, 'db.sqlite')], dir);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--judge-rubric: cannot read nope.txt/);
    const alone = await spindle([...base, '--judge-weight', '2', '--db', join(dir, 'db.sqlite')], dir);
    assert.equal(alone.code, 2);
    assert.match(alone.stderr, /--judge-weight needs --judge POLICY/);
  });
});
