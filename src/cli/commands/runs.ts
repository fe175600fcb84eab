/** `spindle runs` and `spindle show RUN`: what the store holds. */
import { UsageError } from '../../core/errors.ts';
import { recordDeadRuns } from '../../store/dead-runs.ts';
import { openStore } from '../../store/open.ts';
import { describeOwner } from '../../store/run-owner.ts';
import type { Store } from '../../store/store.ts';
import type { Run } from '../../core/trajectory.ts';
import { fmt, makeOutput, table } from '../output.ts';

/** Records the store's dead runs as failed (dead-runs.ts), saying so on stderr with how to go on. */
async function recordAndReportDeadRuns(store: Store, db: string | undefined): Promise<void> {
  for (const run of await recordDeadRuns(store)) process.stderr.write(`spindle: ${deadRunNotice(run, db)}\n`);
}

function deadRunNotice(run: Run, db: string | undefined): string {
  const step = run.summary?.lastCheckpointStep;
  const next = typeof step === 'number' ? `; its latest checkpoint is step ${step}: continue with spindle train --resume ${run.id}${db === undefined ? '' : ` --db ${db}`}` : '';
  return `run ${run.id}: ${String(run.summary?.error)}; recorded as failed${next}`;
}

export async function runsCommand(flags: { db?: string; json?: boolean; limit: number }): Promise<void> {
  const out = makeOutput(!!flags.json);
  const store = await openStore(flags.db);
  try {
    await recordAndReportDeadRuns(store, flags.db);
    const runs = await store.listRuns({ limit: flags.limit });
    const rows = runs.map((r) => {
      const s = (r.summary ?? {}) as Record<string, unknown>;
      const mean = typeof s.meanReturn === 'number' ? fmt(s.meanReturn) : '';
      return [r.id, r.kind, r.env, r.policy, r.status, String(s.episodes ?? ''), mean, r.createdAt.replace('T', ' ').slice(0, 19)];
    });
    out.line(runs.length ? table(['run', 'kind', 'env', 'policy', 'status', 'episodes', 'mean return', 'created'], rows) : 'no runs yet');
    out.result({ runs });
  } finally {
    await store.close();
  }
}

export async function showCommand(runId: string, flags: { db?: string; json?: boolean; trajectories: number }): Promise<void> {
  const out = makeOutput(!!flags.json);
  const store = await openStore(flags.db);
  try {
    await recordAndReportDeadRuns(store, flags.db);
    const run = await store.getRun(runId);
    if (!run) throw new UsageError(`RUN: no run '${runId}' in this database (see spindle runs)`);
    const page = await store.listTrajectories(runId, { limit: Math.max(1, flags.trajectories) });
    const trajectories = flags.trajectories > 0 ? page.items : [];
    const metrics = await store.getMetrics(runId);
    const checkpoints = await store.listCheckpoints(runId);
    out.line(`run ${run.id}: ${run.kind} ${run.env} with ${run.policy} (${run.status})`);
    out.line(`  created ${run.createdAt}${run.finishedAt ? `, finished ${run.finishedAt}` : ''}`);
    if (run.status === 'running' && run.owner) out.line(`  running in ${describeOwner(run.owner)}`);
    out.line(`  env options ${JSON.stringify(run.envOptions)}`);
    out.line(`  config ${JSON.stringify(run.config)}`);
    out.line(`  folder ${store.runDir(run.id)}`);
    if (run.summary) {
      out.line('  summary:');
      for (const [k, v] of Object.entries(run.summary)) {
        if (k === 'quality' || (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length > 6)) continue;
        out.line(`    ${k.padEnd(18)} ${typeof v === 'number' ? (Number.isInteger(v) ? String(v) : fmt(v)) : JSON.stringify(v)}`);
      }
    }
    if (metrics.length) out.line(`  metrics: ${metrics.length} points over ${new Set(metrics.map((m) => m.step)).size} steps`);
    if (checkpoints.length) out.line(`  checkpoints: ${checkpoints.map((c) => `step ${c.step} (${c.path})`).join(', ')}`);
    for (const t of trajectories) {
      out.line();
      out.line(`  trajectory ${t.id} seed ${t.seed} sample ${t.sample}: ${t.status}${t.statusReason ? ` (${t.statusReason})` : ''}, reward ${fmt(t.reward)}`);
      for (const turn of t.turns) {
        const answer = turn.calls.at(-1)?.completion.text ?? '';
        out.line(`    turn ${turn.index}: ${turn.observation.replace(/\s+/g, ' ').slice(0, 120)}`);
        out.line(`      -> ${answer.replace(/\s+/g, ' ').slice(0, 120)}${turn.invalid ? '  [invalid]' : ''}  reward ${fmt(turn.reward)}`);
      }
    }
    out.result({ run, trajectories, metrics, checkpoints });
  } finally {
    await store.close();
  }
}
