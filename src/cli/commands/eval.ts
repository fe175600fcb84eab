/**
 * `spindle eval`: several policies on the same seeds (greedy decoding unless --temperature says
 * otherwise), each with its mean return, interval, outcome rates, invalid rate and exact value, the
 * oracle's value and the head-to-head rate of every pair. Stores an `eval` run.
 */
import { UsageError } from '../../core/errors.ts';
import { resolveEpisodeSettings } from '../../agent/episode-settings.ts';
import { loadEnvSpec } from '../../envs/registry.ts';
import { parseEnvOptionPairs, resolveEnvOptions } from '../../envs/options.ts';
import { evaluatePolicies } from '../../eval/evaluate.ts';
import { formatEvalReport } from '../eval-report.ts';
import type { Policy } from '../../policy/policy.ts';
import { resolvePolicy } from '../../policy/resolve.ts';
import { rolloutSeeds } from '../../rollout/rollouts.ts';
import { openStore } from '../../store/open.ts';
import { makeOutput } from '../output.ts';
import { startProgress, type Progress } from '../progress.ts';
import { RecordedRun } from '../recorded-run.ts';
import { parseSavePolicy } from '../trajectory-sink.ts';

export interface EvalFlags {
  env: string;
  policy: string[];
  episodes: number;
  seed: number;
  envOpt?: string[];
  temperature: number;
  maxTurns?: number;
  maxTokens?: number;
  concurrency: number;
  threads?: number;
  saveTrajectories: string;
  db?: string;
  baseUrl?: string;
  apiKey?: string;
  tokenizer?: string;
  json?: boolean;
}

/** Resolves every policy before anything runs; closes those already made when one is refused. */
async function resolvePolicies(names: string[], context: Parameters<typeof resolvePolicy>[1]): Promise<Policy[]> {
  const policies: Policy[] = [];
  try {
    for (const name of names) policies.push(await resolvePolicy(name, context));
  } catch (error) {
    await Promise.all(policies.map((p) => p.close?.()));
    throw error;
  }
  const seen = new Set<string>();
  for (const p of policies) {
    if (seen.has(p.name)) {
      await Promise.all(policies.map((q) => q.close?.()));
      throw new UsageError(`--policy: '${p.name}' is given twice`);
    }
    seen.add(p.name);
  }
  return policies;
}

/** The policies that play with their own answer budget: name → maxTokens, for the run's config. */
function answerBudgets(policies: Policy[]): Record<string, number> {
  return Object.fromEntries(policies.flatMap((p) => (p.answerBudget === undefined ? [] : [[p.name, p.answerBudget]])));
}

export async function evalCommand(flags: EvalFlags): Promise<void> {
  const out = makeOutput(!!flags.json);
  // Validate everything before anything is written.
  if (flags.policy.length === 0) throw new UsageError('--policy: give at least one policy (repeat --policy to compare several)');
  const spec = await loadEnvSpec(flags.env);
  const options = resolveEnvOptions(spec, parseEnvOptionPairs(flags.envOpt ?? []));
  const episode = resolveEpisodeSettings(
    Object.fromEntries(
      Object.entries({ maxTurns: flags.maxTurns, maxTokens: flags.maxTokens, temperature: flags.temperature }).filter(([, v]) => v !== undefined),
    ),
  );
  const save = parseSavePolicy(flags.saveTrajectories);
  if (Number.isNaN(save)) throw new UsageError(`--save-trajectories: expected all, none or a count, got ${JSON.stringify(flags.saveTrajectories)}`);
  const seeds = rolloutSeeds({ count: flags.episodes, baseSeed: flags.seed });
  if (flags.threads !== undefined) {
    // LLM policies start the engine with this many threads (loaded only when asked for).
    const { initEngine } = await import('../../model/engine.ts');
    await initEngine({ threads: flags.threads });
  }
  // Without --max-tokens each policy with an answer budget of its own plays with it.
  const ownBudgets = flags.maxTokens === undefined;
  const policies = await resolvePolicies(flags.policy, { spec, options, db: flags.db, baseUrl: flags.baseUrl, apiKey: flags.apiKey, tokenizer: flags.tokenizer });

  const store = await openStore(flags.db);
  const run = await RecordedRun.start(
    store,
    {
      kind: 'eval',
      env: spec.name,
      envOptions: options,
      policy: policies.map((p) => p.name).join(', '),
      config: { policies: policies.map((p) => p.name), episodes: flags.episodes, seed: flags.seed, concurrency: flags.concurrency, episode, answerBudgets: ownBudgets ? answerBudgets(policies) : {}, saveTrajectories: save },
    },
    save,
  );
  const sink = run.sink;
  // One progress line per policy, replaced as the evaluation moves on.
  const bar: { current: Progress | null } = { current: null };
  try {
    const report = await evaluatePolicies({
      spec,
      options,
      policies,
      seeds,
      episode,
      answerBudgets: ownBudgets,
      concurrency: flags.concurrency,
      runId: run.id,
      onTrajectory: (t) => sink.add(t),
      onPolicyStart: (name, total) => {
        bar.current = startProgress(`eval ${spec.name} ${name}`, total);
      },
      onEpisode: (_name, done, meanReturn) => bar.current?.update(done, `mean return ${meanReturn.toFixed(3)}`),
      onPolicyEnd: () => {
        bar.current?.stop();
        bar.current = null;
      },
    });
    await sink.flush();
    const result = { run: run.id, ...report, savedTrajectories: sink.savedCount };
    await run.finish(result);
    for (const line of formatEvalReport(report)) out.line(line);
    out.line(`run ${run.id} (${sink.savedCount} trajectories stored)`);
    out.result(result);
  } catch (err) {
    bar.current?.stop();
    await run.fail(err);
    throw err;
  } finally {
    run.close();
    await Promise.all(policies.map((p) => p.close?.()));
    await store.close();
  }
}
