/**
 * Schemas of the records the store keeps, checked on the way in (so nothing unreadable is written:
 * JSON would silently turn NaN into null) and on the way out (so a damaged row is named, not a crash
 * deep inside a trainer). Objects are loose: a field added to a core type later round-trips untouched.
 */
import { z } from 'zod';
import { messageSchema, toolCallSchema, toolSpecSchema } from '../core/schemas.ts';
import type { FinishReason } from '../core/completion.ts';
import type {
  CheckpointRecord,
  Group,
  MetricPoint,
  ParseErrorKind,
  QualityIssue,
  Run,
  RunKind,
  RunOwner,
  RunStatus,
  Trajectory,
  TrajectoryStatus,
} from '../core/trajectory.ts';

// zod 4's z.number() already refuses NaN and ±Infinity, which JSON cannot hold.
const finite = z.number();
const int = z.number().int();
const count = int.min(0);
const json = z.record(z.string(), z.unknown());
const numbers = z.record(z.string(), finite);

/**
 * z.enum over every member of the string union T. Leaving a member out is a compile error naming
 * it, so a kind added to a core type cannot make the store refuse records that carry it.
 */
function enumOf<T extends string>() {
  return <const V extends readonly [T, ...T[]]>(
    values: V & ([Exclude<T, V[number]>] extends [never] ? unknown : { missing: Exclude<T, V[number]> }),
  ) => z.enum(values);
}

const finishReason = enumOf<FinishReason>()(['stop', 'length', 'tool_calls', 'timeout', 'error']);
const parseErrorKind = enumOf<ParseErrorKind>()([
  'no_tool_call',
  'malformed_json',
  'unknown_tool',
  'bad_arguments',
  'empty',
]);
const trajectoryStatus = enumOf<TrajectoryStatus>()(['completed', 'truncated', 'failed']);
const qualityKind = enumOf<QualityIssue['kind']>()(['empty_response', 'no_action', 'too_few_turns', 'missing_system_prompt']);
const runKind = enumOf<RunKind>()(['play', 'eval', 'train', 'proxy']);
const runStatus = enumOf<RunStatus>()(['running', 'finished', 'failed']);

/** Run ids name folders, so they are restricted to safe characters. */
export const runIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, 'a run id is 1-128 letters, digits, _ . or -, starting with a letter or digit');
/** Other ids are opaque keys. */
export const idSchema = z.string().min(1, 'an id may not be empty').max(256, 'an id is at most 256 characters');

const completionSchema = z.looseObject({
  text: z.string(),
  promptTokenIds: z.array(count).nullable(),
  completionTokenIds: z.array(count).nullable(),
  logprobs: z.array(finite).nullable(),
  modelLogprobs: z.array(finite).nullable().optional(),
  tokenIdsExact: z.boolean(),
  finishReason,
  toolCalls: z.array(z.looseObject({ id: z.string().optional(), name: z.string(), arguments: z.string() })).optional(),
  reasoning: z.string().optional(),
  modelId: z.string(),
  policyVersion: count,
});

const llmCallSchema = z.looseObject({
  messages: z.array(messageSchema),
  tools: z.array(toolSpecSchema),
  completion: completionSchema,
  latencyMs: finite,
  sampling: z
    .looseObject({
      temperature: finite.min(0).nullable(),
      maxTokens: int.min(1).nullable(),
      topP: finite.optional(),
      topK: int.optional(),
      stop: z.array(z.string()).optional(),
      seed: int.optional(),
    })
    .optional(),
  invalid: z.boolean().optional(),
  decision: z
    .looseObject({
      alternatives: z.array(completionSchema),
      rewards: z.array(finite.nullable()),
      invalid: z.array(z.boolean()),
      actionValues: z.array(z.looseObject({ action: z.looseObject({ name: z.string(), arguments: json }), reward: finite })).optional(),
    })
    .refine((d) => d.rewards.length === d.alternatives.length + 1 && d.invalid.length === d.rewards.length, {
      message: 'rewards and invalid need one entry per completion (the played one first)',
    })
    .optional(),
});

const turnSchema = z.looseObject({
  index: count,
  observation: z.string(),
  state: json.optional(),
  calls: z.array(llmCallSchema),
  actions: z.array(toolCallSchema),
  informational: z.array(z.looseObject({ call: toolCallSchema, result: z.string() })),
  parseError: z
    .looseObject({
      kind: parseErrorKind,
      message: z.string(),
      raw: z.string(),
    })
    .nullable(),
  invalid: z.boolean(),
  feedback: z.string(),
  reward: finite,
  rewardParts: numbers,
  done: z.boolean(),
  truncated: z.boolean(),
  info: json,
  timings: z.looseObject({ policyMs: finite, envMs: finite }),
});

export const trajectorySchema: z.ZodType<Trajectory> = z.looseObject({
  id: idSchema,
  runId: runIdSchema.nullable(),
  groupId: idSchema.nullable(),
  env: z.string().min(1),
  seed: int,
  sample: count,
  policy: z.string(),
  turns: z.array(turnSchema),
  messages: z.array(messageSchema),
  additionalHistories: z.array(z.array(messageSchema)),
  reward: finite,
  rewardParts: numbers,
  metrics: numbers,
  status: trajectoryStatus,
  statusReason: z.string().nullable(),
  policyVersions: z.array(count),
  quality: z.array(
    z.looseObject({
      kind: qualityKind,
      turn: count.nullable(),
      message: z.string(),
    }),
  ),
  startedAt: z.string(),
  finishedAt: z.string(),
});

export const runOwnerSchema: z.ZodType<RunOwner> = z.strictObject({
  host: z.string(),
  pid: z.number().int().positive(),
  bootId: z.string().nullable(),
  startTicks: z.number().int().min(0).nullable(),
});

export const runSchema: z.ZodType<Run> = z.looseObject({
  id: runIdSchema,
  kind: runKind,
  env: z.string().min(1),
  envOptions: json,
  policy: z.string(),
  config: json,
  status: runStatus,
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  summary: json.nullable(),
  owner: runOwnerSchema.nullable().optional(),
});

export const groupSchema: z.ZodType<Group> = z.looseObject({
  id: idSchema,
  runId: runIdSchema.nullable(),
  env: z.string().min(1),
  seed: int,
  trajectoryIds: z.array(idSchema),
});

export const checkpointSchema: z.ZodType<CheckpointRecord> = z.looseObject({
  runId: runIdSchema,
  step: count,
  path: z.string().min(1),
  policyVersion: count,
  createdAt: z.string(),
  metrics: numbers,
});

export const metricPointSchema: z.ZodType<MetricPoint> = z.looseObject({
  runId: runIdSchema,
  step: count,
  name: z.string().min(1),
  value: finite,
});
