/**
 * `npm run bench -- proxy [--json] [--requests N]`: the recording proxy's added latency. A loopback
 * vLLM-shaped upstream (test/server/fixtures/proxy-upstream.ts) answers chat calls with token ids;
 * the same request is sent directly and through `spindle proxy` (a real process), alternating, with
 * keep-alive connections on both paths; proxied calls go to trajectories of 20 calls each. Figures: p50/p99 of each path and the p50 of the paired
 * differences (the proxy's overhead; target < 2 ms). Every proxied call is recorded in the store.
 */
import type { BenchRun } from './run.ts';
import { startProxyProcess } from '../test/server/fixtures/proxy-process.ts';
import { startToyUpstream } from '../test/server/fixtures/proxy-upstream.ts';

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const round = (x: number) => Math.round(x * 1000) / 1000;

export const run: BenchRun = async (args, log) => {
  const i = args.indexOf('--requests');
  const requests = i >= 0 ? Number(args[i + 1]) : 2000;
  if (!Number.isInteger(requests) || requests < 10) throw new Error('--requests: an integer of at least 10');
  const upstream = await startToyUpstream();
  const proxy = await startProxyProcess(upstream.url);
  try {
    const body = JSON.stringify({
      model: 'toy',
      messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Say something short.' }],
      return_token_ids: true,
      logprobs: true,
    });
    const call = async (url: string, headers: Record<string, string> = {}) => {
      const t0 = performance.now();
      const res = await fetch(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      await res.text();
      if (!res.ok) throw new Error(`status ${res.status}`);
      return performance.now() - t0;
    };
    const viaProxy = (n: number) => call(`${proxy.url}/v1`, { 'x-spindle-trajectory': `bench-${Math.floor(n / 20)}` });
    for (let n = 0; n < 200; n++) {
      await call(upstream.url);
      await viaProxy(n);
    }
    const direct: number[] = [];
    const proxied: number[] = [];
    const diffs: number[] = [];
    for (let n = 0; n < requests; n++) {
      const d = await call(upstream.url);
      const p = await viaProxy(n);
      direct.push(d);
      proxied.push(p);
      diffs.push(p - d);
    }
    for (const xs of [direct, proxied, diffs]) xs.sort((a, b) => a - b);
    const figures = {
      requests,
      directP50Ms: round(quantile(direct, 0.5)),
      directP99Ms: round(quantile(direct, 0.99)),
      proxyP50Ms: round(quantile(proxied, 0.5)),
      proxyP99Ms: round(quantile(proxied, 0.99)),
      proxyOverheadP50Ms: round(quantile(diffs, 0.5)),
      proxyOverheadP99Ms: round(quantile(diffs, 0.99)),
    };
    log(`direct   p50 ${figures.directP50Ms} ms  p99 ${figures.directP99Ms} ms`);
    log(`proxied  p50 ${figures.proxyP50Ms} ms  p99 ${figures.proxyP99Ms} ms`);
    log(`overhead p50 ${figures.proxyOverheadP50Ms} ms  p99 ${figures.proxyOverheadP99Ms} ms (target p50 < 2 ms)`);
    return figures;
  } finally {
    await proxy.stop();
    await upstream.close();
  }
};
