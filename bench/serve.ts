/**
 * `npm run bench -- serve [--json] [--requests N] [--max-tokens M] [--threads T]`: `spindle serve` (a real
 * process, the fresh default model, since the scratch store is empty) driven by the `openai` client over
 * loopback at concurrency 1, 8 and 32. Figures per level: requests/s, generated tokens/s, p50/p99
 * latency. Concurrent requests share decode batches, so throughput should grow with concurrency.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { positiveIntFlag } from './flags.ts';
import type { BenchFigures, BenchRun } from './run.ts';

const BIN = resolve(import.meta.dirname, '../bin/spindle.js');
const LEVELS = [1, 8, 32];

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const round = (x: number) => Math.round(x * 100) / 100;

export const run: BenchRun = async (args, log) => {
  const requests = positiveIntFlag(args, 'requests', 64);
  const maxTokens = positiveIntFlag(args, 'max-tokens', 32);
  const threads = positiveIntFlag(args, 'threads', 1);
  const db = join(mkdtempSync(join(tmpdir(), 'spindle-bench-serve-')), 'empty.db');
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--threads', String(threads), '--db', db], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8');
  const url = await new Promise<string>((ok, fail) => {
    child.stderr.on('data', (d: string) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) ok(m[1]);
    });
    child.on('exit', (code) => fail(new Error(`spindle serve exited with ${code}: ${err}`)));
  });
  const figures: BenchFigures = { requests, maxTokens, threads };
  try {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'none', maxRetries: 0, timeout: 600_000 });
    const model = (await client.models.list()).data[0].id;
    const ask = (i: number) => ({
      model,
      messages: [{ role: 'user' as const, content: `Hand ${i % 21}: the dealer shows ${i % 10}. hit or stick?` }],
      max_tokens: maxTokens,
      temperature: 1,
      seed: i,
      return_token_ids: true,
    });
    const one = async (i: number) => {
      const t0 = performance.now();
      const r = await client.chat.completions.create(ask(i) as OpenAI.ChatCompletionCreateParamsNonStreaming);
      return { ms: performance.now() - t0, tokens: r.usage?.completion_tokens ?? 0 };
    };
    await one(10_000); // compile the shapes of one-row decoding before timing
    for (const concurrency of LEVELS) {
      // One untimed round at this level first: batches of new sizes compile their shapes once.
      await Promise.all(Array.from({ length: concurrency }, (_, i) => one(20_000 + i)));
      const latencies: number[] = [];
      let tokens = 0;
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < requests) {
            const r = await one(next++);
            latencies.push(r.ms);
            tokens += r.tokens;
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      latencies.sort((a, b) => a - b);
      const row = { rps: round(requests / seconds), tokensPerSec: round(tokens / seconds), p50Ms: round(quantile(latencies, 0.5)), p99Ms: round(quantile(latencies, 0.99)) };
      log(`concurrency ${String(concurrency).padStart(2)}: ${row.rps} req/s, ${row.tokensPerSec} tokens/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms`);
      for (const [k, v] of Object.entries(row)) figures[`c${concurrency}_${k}`] = v;
    }
  } finally {
    child.kill('SIGTERM');
  }
  return figures;
};
