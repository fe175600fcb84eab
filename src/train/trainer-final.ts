/**
 * The end of `spindle train`: the trained policy beside the warm start, `random`, the env's simple
 * baselines and the oracle, all on the same held-out seeds with greedy decoding (src/eval), so the
 * gain over the warm start is what RL discovered.
 */
import { join } from 'node:path';
import { resolveEpisodeSettings } from '../agent/episode-settings.ts';
import { UsageError } from '../core/errors.ts';
import type { EnvSpec } from '../envs/env.ts';
import { evaluatePolicies, type EvalReport, type PolicyEval } from '../eval/evaluate.ts';
import { tree } from '../model/engine.ts';
import { toParams } from '../model/params.ts';
import type { EmbeddedPolicy } from '../policy/embedded.ts';
import type { Policy } from '../policy/policy.ts';
import { resolvePolicy } from '../policy/resolve.ts';
import { loadModelFolder } from './checkpoint-io.ts';
import type { TrainSettings } from './train-config.ts';
import { trainerPolicy } from './trainer-policy.ts';
import { evalSeeds } from './trainer-seeds.ts';

/** Scripted baselines tried for every env (those that cannot play it are skipped), then the env's own rules. */
const BASELINES = ['random', 'stick-at-17', 'always-stick', 'oracle'];
export const WARM_START_POLICY = 'warm-start';

export interface FinalEvalInput<O extends Record<string, unknown>> {
  spec: EnvSpec<O>;
  options: O;
  settings: TrainSettings;
  trained: EmbeddedPolicy;
  runDir: string;
  /** The warm-started weights' folder, relative to runDir (null: no warm start to compare). */
  warmStartPath: string | null;
  maxTurns: number;
  maxTokens: number;
  onPolicy?: (policy: string, episodes: number) => void;
  /** After each episode: episodes done and the mean return so far (evaluatePolicies' onEpisode). */
  onEpisode?: (policy: string, done: number, meanReturn: number) => void;
  onPolicyEnd?: (policy: string) => void;
}

export interface FinalEval {
  report: EvalReport;
  trained: PolicyEval;
  warmStart: PolicyEval | null;
  /** Mean return (greedy, same seeds) by baseline name, the warm start included. */
  baselines: Record<string, number>;
}

async function scriptedBaselines<O extends Record<string, unknown>>(spec: EnvSpec<O>, options: O): Promise<Policy[]> {
  const out: Policy[] = [];
  for (const name of [...BASELINES, ...Object.keys(spec.baselines ?? {})]) {
    try {
      out.push(await resolvePolicy(name, { spec, options }));
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
    }
  }
  return out;
}

export async function finalEvaluation<O extends Record<string, unknown>>(input: FinalEvalInput<O>): Promise<FinalEval> {
  const { settings } = input;
  let warm: EmbeddedPolicy | null = null;
  if (input.warmStartPath !== null) {
    const folder = loadModelFolder(join(input.runDir, input.warmStartPath));
    const params = toParams(folder.params);
    warm = trainerPolicy(folder.assets, params, { name: WARM_START_POLICY, modelId: WARM_START_POLICY, version: 0, maxBatchRows: settings.rollout.maxBatchRows });
    tree.dispose(params);
  }
  try {
    const scripted = await scriptedBaselines(input.spec, input.options);
    const policies: Policy[] = [input.trained, ...(warm ? [warm] : []), ...scripted];
    const report = await evaluatePolicies({
      spec: input.spec,
      options: input.options,
      policies,
      seeds: evalSeeds(settings.finalEvalEpisodes),
      episode: resolveEpisodeSettings({ maxTurns: input.maxTurns, maxTokens: input.maxTokens, temperature: 0 }),
      concurrency: settings.rollout.concurrency,
      onPolicyStart: input.onPolicy,
      onEpisode: input.onEpisode,
      onPolicyEnd: input.onPolicyEnd,
    });
    const byName = new Map(report.policies.map((p) => [p.policy, p]));
    const baselines: Record<string, number> = {};
    for (const p of report.policies) if (p.policy !== input.trained.name) baselines[p.policy] = p.meanReturn;
    return { report, trained: byName.get(input.trained.name)!, warmStart: byName.get(WARM_START_POLICY) ?? null, baselines };
  } finally {
    await warm?.close();
  }
}
