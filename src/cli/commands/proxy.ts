/**
 * `spindle proxy --upstream URL`: the recording proxy (src/server/proxy.ts) as a long-running
 * command. It records into a `proxy` run of the store and stops on SIGINT or SIGTERM, after its
 * queued writes, marking the run finished.
 */
import { UsageError } from '../../core/errors.ts';
import { newId, nowIso } from '../../core/ids.ts';
import type { Run } from '../../core/trajectory.ts';
import { runIdSchema } from '../../store/recordSchemas.ts';
import { openStore } from '../../store/open.ts';
import { describeOwner, liveOwner } from '../../store/run-owner.ts';
import { startProxy } from '../../server/proxy.ts';
import { judgeFromFlags, type JudgeFlags } from '../../rewards/judge-flags.ts';
import { makeOutput } from '../output.ts';

export interface ProxyFlags extends JudgeFlags {
  upstream: string;
  host: string;
  port: number;
  db?: string;
  run?: string;
  bodyLimit?: number;
  requestTokenIds?: boolean;
  /** For --judge openai:MODEL. */
  baseUrl?: string;
  apiKey?: string;
  json?: boolean;
}

function checkUpstream(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--upstream: '${value}' is not a URL (e.g. http://127.0.0.1:8000/v1)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--upstream: use an http or https URL, got '${url.protocol}'`);
  return value.replace(/\/+$/, '');
}

export async function proxyCommand(flags: ProxyFlags): Promise<void> {
  const out = makeOutput(!!flags.json);
  const upstream = checkUpstream(flags.upstream);
  const runId = flags.run ?? newId('proxy');
  if (!runIdSchema.safeParse(runId).success) throw new UsageError(`--run: '${runId}' is not a valid run id (letters, digits, _ . -, starting with a letter or digit)`);

  const judge = await judgeFromFlags(flags, { db: flags.db, baseUrl: flags.baseUrl, apiKey: flags.apiKey });
  const store = await openStore(flags.db);
  const run: Run = {
    id: runId,
    kind: 'proxy',
    env: 'proxy',
    envOptions: {},
    policy: upstream,
    config: { upstream },
    status: 'running',
    createdAt: nowIso(),
    finishedAt: null,
    summary: null,
  };
  // Restarting with the same --run and upstream continues the run.
  const existing = await store.getRun(runId);
  const live = existing ? liveOwner(existing) : null;
  const refusal =
    existing && (existing.kind !== 'proxy' || existing.policy !== upstream)
      ? `run '${runId}' exists and is not a proxy run of ${upstream}`
      : live
        ? `run '${runId}' is still recorded by ${describeOwner(live)}; stop that proxy first`
        : null;
  if (refusal) {
    await store.close();
    await judge?.policy.close?.();
    throw new UsageError(`--run: ${refusal}`);
  }
  if (existing) await store.reopenRun(runId);
  else await store.createRun(run);

  const proxy = await startProxy({
    upstream,
    store,
    runId,
    host: flags.host,
    port: flags.port,
    bodyLimit: flags.bodyLimit,
    requestTokenIds: !!flags.requestTokenIds,
    judge: judge?.part,
  });
  out.line(`spindle proxy: ${proxy.url} -> ${upstream} (run ${runId})`);
  out.line(`  name a trajectory with the header x-spindle-trajectory or the base URL ${proxy.url}/t/ID/v1`);
  if (judge) out.line(`  judge ${judge.policy.name}: POST ${proxy.url}/groups/TASK/judge scores a task's group`);
  out.result({ event: 'listening', url: proxy.url, runId, upstream, judge: judge?.policy.name ?? null });

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await proxy.close();
  await judge?.policy.close?.();
  const summary = proxy.recorder.summary();
  await store.finishRun(runId, { status: 'finished', finishedAt: nowIso(), summary });
  await store.close();
  out.line(`spindle proxy: stopped; ${JSON.stringify(summary)}`);
  out.result({ event: 'stopped', runId, ...summary });
}
