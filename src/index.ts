/** Spindle's library API: everything the CLI does is available as typed functions and types. */
export { z } from 'zod';

export type * from './core/messages.ts';
export type * from './core/completion.ts';
export type * from './core/trajectory.ts';
export { Rng } from './core/random.ts';
export { meanCi, type MeanCi } from './core/stats.ts';
export { newId } from './core/ids.ts';
export { UsageError } from './core/errors.ts';
export * from './core/schemas.ts';

export type * from './envs/env.ts';
export { builtinEnvs } from './envs/builtin.ts';
export { loadEnvSpec, registerEnv, listEnvs, checkEnvSpec } from './envs/registry.ts';
export { parseEnvOptionPairs, resolveEnvOptions } from './envs/options.ts';

export type * from './policy/policy.ts';
export type * from './rewards/reward.ts';
export { combineRewardParts, turnRewardParts } from './rewards/composite.ts';
export { formatReward } from './rewards/format.ts';
export { reasoningReward } from './rewards/reasoning.ts';

export { parseCompletion, type ParsedAnswer } from './agent/parse-tool-calls.ts';
export { systemPrompt } from './agent/prompt.ts';
export { runEpisode, type EpisodeInput } from './agent/episode.ts';
export { resolveEpisodeSettings, episodeSettingsSchema, type EpisodeSettings } from './agent/episode-settings.ts';

export { randomPolicy, oraclePolicy, stickAtPolicy, alwaysStickPolicy, toolCallText } from './policy/scripted.ts';
export { resolvePolicy, registerPolicyResolver, validPolicyForms, type PolicyContext } from './policy/resolve.ts';

export { runRollouts, rolloutSeeds, type RolloutRequest, type RolloutResult, type RolloutEvent } from './rollout/rollouts.ts';
export type { RolloutSummary } from './rollout/summary.ts';
export { checkTrajectoryQuality, summarizeQuality, formatQualityReport, type QualityReport } from './rollout/quality.ts';

export type * from './store/store.ts';
export { openStore } from './store/open.ts';
export { DatabaseRefusedError, CorruptRecordError } from './store/errors.ts';

export { computeAdvantages, advantageConfigSchema, type AdvantageConfig, type AdvantageResult } from './advantage/compute.ts';
export type * from './advantage/types.ts';
export { scoredGroupsFromTrajectories } from './advantage/from-trajectories.ts';

export { buildSamples } from './train/samples.ts';
export type * from './train/samples-types.ts';
export { toAtroposScoredData, atroposToJsonl } from './train/atropos.ts';
export { samplesToJsonl, samplesFromJsonl, writeSamplesJsonl, readSamplesJsonl } from './train/samples-jsonl.ts';

export { evaluatePolicies, type EvalRequest, type EvalReport, type PolicyEval, type GreedyTableReport } from './eval/evaluate.ts';
export { headToHead, headToHeadMatrix, type HeadToHead } from './eval/head-to-head.ts';
export { blackjackGreedyTable, type GreedyTable } from './train/greedy-table.ts';
export { exportCheckpoint, type ExportOptions, type ExportResult } from './model/export.ts';
export { resolveRunCheckpoint, type RunCheckpoint } from './policy/run-checkpoint.ts';

export { trainRun, type TrainRunInput, type TrainOutcome, type TrainEvent } from './train/trainer.ts';
export { trainConfigSchema, parseTrainConfig, applyFlagOverrides, type TrainConfig, type TrainSettings } from './train/train-config.ts';
export { finalEvaluation, type FinalEval } from './train/trainer-final.ts';
export { createDefaultModel, type ModelAssets, type DefaultModel } from './train/default-model.ts';
export { buildTokenizerCorpus, type CorpusOptions } from './train/tokenizer-corpus.ts';
export { warmStart, type WarmStartResult } from './train/warm-start.ts';
export { saveModelFolder, loadModelFolder, saveTrainCheckpoint, loadTrainCheckpoint } from './train/checkpoint-io.ts';
export { parseTrainerState, type TrainerState } from './train/trainer-state.ts';
export { buildRlLayouts, LayoutShapes, type RlLayout } from './train/rl-batch.ts';
export { learningCurveSvg, type CurveInput } from './report/learning-curve.ts';
export { writeTrainReport, type TrainReportInput } from './report/train-report.ts';
