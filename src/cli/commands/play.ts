/** `spindle play`: plays N episodes of an env with a policy, stores the run and reports its figures. */
import { UsageError } from '../../core/errors.ts';
import { loadEnvSpec } from '../../envs/registry.ts';
import { parseEnvOptionPairs, resolveEnvOptions } from '../../envs/options.ts';
import { resolvePolicy } from '../../policy/resolve.ts';
import { resolveEpisodeSettings, withAnswerBudget } from '../../agent/episode-settings.ts';
import { runRollouts, rolloutSeeds } from '../../rollout/rollouts.ts';
import { formatQualityReport } from '../../rollout/quality.ts';
import { openStore } from '../../store/open.ts';
import { fmt, makeOutput, pct } from '../output.ts';
import { startProgress } from '../progress.ts';
import { RecordedRun } from '../recorded-run.ts';
import { parseSavePolicy } from '../trajectory-sink.ts';
import { exactValues } from '../../eval/exact-values.ts';
import { isGroupUnscored } from '../../rewards/group-reward.ts';
import { judgeFromFlags, withGroupParts, type JudgeFlags } from '../../rewards/judge-flags.ts';

export interface PlayFlags extends JudgeFlags {
  env: string;
  policy: string;
  episodes: number;
  seed: number;
  envOpt?: string[];
  groupSize: number;
  concurrency: number;
  maxTurns?: number;
  maxTokens?: number;
  temperature?: number;
  saveTrajectories: string;
  db?: string;
  baseUrl?: string;
  apiKey?: string;
  tokenizer?: string;
  json?: boolean;
}

export async function playCommand(flags: PlayFlags): Promise<void> {
  const out = makeOutput(!!flags.json);
  // Validate everything before anything is written.
  const spec = await loadEnvSpec(flags.env);
  const options = resolveEnvOptions(spec, parseEnvOptionPairs(flags.envOpt ?? []));
  const policy = await resolvePolicy(flags.policy, { spec, options, db: flags.db, baseUrl: flags.baseUrl, apiKey: flags.apiKey, tokenizer: flags.tokenizer });
  const judge = await judgeFromFlags(flags, { db: flags.db, baseUrl: flags.baseUrl, apiKey: flags.apiKey });
  const settings = resolveEpisodeSettings(
    Object.fromEntries(
      Object.entries({ maxTurns: flags.maxTurns, maxTokens: flags.maxTokens, temperature: flags.temperature }).filter(([, v]) => v !== undefined),
    ),
  );
  const episode = flags.maxTokens === undefined ? withAnswerBudget(settings, policy) : settings;
  const save = parseSavePolicy(flags.saveTrajectories);
  if (Number.isNaN(save)) throw new UsageError(`--save-trajectories: expected all, none or a count, got ${JSON.stringify(flags.saveTrajectories)}`);
  if (flags.episodes % flags.groupSize !== 0) {
    throw new UsageError(`--episodes (${flags.episodes}) must be a multiple of --group-size (${flags.groupSize})`);
  }
  const seeds = rolloutSeeds({ count: flags.episodes / flags.groupSize, baseSeed: flags.seed });

  const store = await openStore(flags.db);
  const run = await RecordedRun.start(
    store,
    {
      kind: 'play',
      env: spec.name,
      envOptions: options,
      policy: policy.name,
      config: { episodes: flags.episodes, seed: flags.seed, groupSize: flags.groupSize, concurrency: flags.concurrency, episode, saveTrajectories: save, ...(judge ? { judge: { policy: judge.policy.name, weight: judge.part.weight ?? 1, rubricFile: flags.judgeRubric ?? null } } : {}) },
    },
    save,
  );
  const sink = run.sink;
  const progress = startProgress(`play ${spec.name} ${policy.name}`, flags.episodes);
  let returnSum = 0;
  let finished = 0;
  let judgeUnscored = 0;
  try {
    const result = await runRollouts({
      spec,
      options,
      policy,
      seeds,
      groupSize: flags.groupSize,
      concurrency: flags.concurrency,
      episode,
      rewards: withGroupParts(spec.rewards?.(options), judge ? [judge.part] : []),
      runId: run.id,
      keepTrajectories: false,
      onEvent: (event) => {
        if (event.type !== 'episode_finished') return;
        finished++;
        returnSum += event.trajectory.reward;
        if (isGroupUnscored(event.trajectory)) judgeUnscored++;
        progress.update(event.progress.finished + event.progress.failed, `mean return ${(returnSum / finished).toFixed(3)}`);
      },
      onTrajectory: (t) => sink.add(t),
      onGroup: (g) => sink.addGroup(g),
    });
    await sink.flush();
    progress.stop();

    const s = result.summary;
    const exact = exactValues(spec, options, policy);
    const report = {
      run: run.id,
      env: spec.name,
      envOptions: options,
      policy: policy.name,
      episodes: flags.episodes,
      finished: s.episodes.finished,
      failed: s.episodes.failed,
      truncated: s.episodes.truncated,
      failureReasons: s.failureReasons,
      meanReturn: s.meanReturn.mean,
      ci95: s.meanReturn.ci95,
      winRate: s.winRate,
      lossRate: s.lossRate,
      drawRate: s.drawRate,
      invalidRate: s.invalidActionRate,
      meanTurns: s.meanTurns,
      meanRewardParts: s.meanRewardParts,
      exactReturn: exact.exactReturn,
      optimalReturn: exact.optimalReturn,
      exactNotes: exact.notes,
      episodesPerSec: s.episodesPerSec,
      savedTrajectories: sink.savedCount,
      quality: s.quality,
      ...(judge ? { judge: judge.policy.name, judgeUnscoredEpisodes: judgeUnscored } : {}),
    };
    await run.finish(report);

    out.line(`${spec.name} · ${policy.name} · ${flags.episodes} episodes from seed ${flags.seed}`);
    out.line(`  mean return        ${fmt(report.meanReturn)}  95% CI [${fmt(report.ci95[0])}, ${fmt(report.ci95[1])}]`);
    out.line(`  win / loss / draw  ${pct(report.winRate)} / ${pct(report.lossRate)} / ${pct(report.drawRate)}`);
    out.line(`  invalid actions    ${pct(report.invalidRate)} of LLM calls`);
    out.line(`  mean turns         ${fmt(report.meanTurns, 2)}`);
    out.line(`  exact return       ${exact.exactReturn === null ? 'n/a (no exact evaluator for this policy and env)' : fmt(exact.exactReturn)}`);
    out.line(`  optimal return     ${exact.optimalReturn === null ? 'n/a' : fmt(exact.optimalReturn)}`);
    for (const note of exact.notes) out.line(`    (${note})`);
    for (const [part, value] of Object.entries(report.meanRewardParts)) out.line(`  reward part ${part.padEnd(10)} ${fmt(value)}`);
    out.line(`  episodes: ${report.finished} finished (${report.truncated} truncated), ${report.failed} failed`);
    for (const [reason, n] of Object.entries(report.failureReasons)) out.line(`    failed: ${reason} x${n}`);
    if (judge) out.line(`  judge              ${judge.policy.name}; ${judgeUnscored} episodes in groups it could not score (no judge part)`);
    for (const line of formatQualityReport(s.quality)) out.line(`  ${line}`);
    out.line(`  run ${run.id} (${sink.savedCount} trajectories stored)`);
    out.result(report);
  } catch (err) {
    progress.stop();
    await run.fail(err);
    throw err;
  } finally {
    run.close();
    await policy.close?.();
    await judge?.policy.close?.();
    await store.close();
  }
}
