/**
 * LLM-judge rewards: a group of trajectories scored relative to each other by a judge model (any
 * Policy), in the spirit of ART's RULER. The answer must be JSON matching the schema, with one score in
 * [0, 1] per trajectory; a bad answer or a failed call is retried, and a group the judge never scores
 * is returned unscored, never with invented scores.
 */
import { z } from 'zod';
import type { Message } from '../core/messages.ts';
import type { Trajectory } from '../core/trajectory.ts';
import type { Policy } from '../policy/policy.ts';
import { applyGroupScore, type GroupRewardPart, type GroupScore } from './group-reward.ts';
import { DEFAULT_RUBRIC, judgeMessages } from './judge-prompt.ts';

export const judgeAnswerSchema = z.object({
  scores: z.array(z.object({ trajectory_id: z.string(), explanation: z.string(), score: z.number().min(0).max(1) })),
});

export interface JudgeOptions {
  judge: Policy;
  rubric?: string;
  /** Tries after the first (default 2). */
  maxRetries?: number;
  maxTokens?: number;
  temperature?: number;
  /** Seeds the judge's first try; try k uses seed + k. */
  seed?: number;
}

export type JudgeResult =
  | { status: 'scored'; scores: number[]; explanations: string[]; attempts: number; errors: string[] }
  | { status: 'unscored'; reason: string; attempts: number; errors: string[] };

/** The JSON object in an answer: the whole text, or the outermost braces inside it (code fences, prose around it). */
function jsonIn(text: string): unknown {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start === -1 || end < start) throw new Error('no JSON object in the answer');
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch (error) {
    throw new Error(`the answer's JSON does not parse: ${(error as Error).message}`, { cause: error });
  }
}

/** The scores in trajectory order, or an error naming what is wrong with the answer. */
export function parseJudgeAnswer(text: string, count: number): { scores: number[]; explanations: string[] } {
  const parsed = judgeAnswerSchema.safeParse(jsonIn(text));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`the answer does not match the schema at ${issue.path.join('.') || 'top level'}: ${issue.message}`);
  }
  const scores = new Array<number | undefined>(count).fill(undefined);
  const explanations = new Array<string>(count).fill('');
  for (const entry of parsed.data.scores) {
    const i = Number(entry.trajectory_id) - 1;
    if (!Number.isInteger(i) || i < 0 || i >= count) throw new Error(`unknown trajectory_id ${JSON.stringify(entry.trajectory_id)}`);
    if (scores[i] !== undefined) throw new Error(`trajectory_id ${entry.trajectory_id} is scored twice`);
    scores[i] = entry.score;
    explanations[i] = entry.explanation;
  }
  const missing = scores.flatMap((s, i) => (s === undefined ? [String(i + 1)] : []));
  if (missing.length > 0) throw new Error(`no score for trajectory_id ${missing.join(', ')}`);
  return { scores: scores as number[], explanations };
}

/** Scores the histories (each trajectory's messages) of one group relative to each other. */
export async function judgeGroup(histories: readonly Message[][], options: JudgeOptions): Promise<JudgeResult> {
  if (histories.length === 0) throw new Error('judgeGroup: the group is empty');
  const messages = judgeMessages(histories, options.rubric ?? DEFAULT_RUBRIC);
  const tries = 1 + (options.maxRetries ?? 2);
  const errors: string[] = [];
  for (let attempt = 1; attempt <= tries; attempt++) {
    try {
      const [answer] = await options.judge.complete({
        messages,
        tools: [],
        maxTokens: options.maxTokens ?? 2048,
        temperature: options.temperature ?? 0,
        ...(options.seed !== undefined ? { seed: options.seed + attempt - 1 } : {}),
      });
      if (!answer) throw new Error('the judge returned no completion');
      if (answer.finishReason === 'length') throw new Error('the answer was cut at max tokens');
      const { scores, explanations } = parseJudgeAnswer(answer.text, histories.length);
      return { status: 'scored', scores, explanations, attempts: attempt, errors };
    } catch (error) {
      errors.push(`try ${attempt}: ${(error as Error).message}`);
    }
  }
  return { status: 'unscored', reason: `the judge gave no valid answer in ${tries} tries (last: ${errors.at(-1)})`, attempts: tries, errors };
}

/**
 * Adds the judge's score as reward part `part` (weight `weight` in the total) to each trajectory of a
 * scored group. An unscored group keeps its rewards and is marked with metric `${part}_unscored` = 1.
 */
export function applyJudgeResult(trajectories: Trajectory[], result: JudgeResult, part = 'judge', weight = 1): void {
  applyGroupScore(trajectories, toGroupScore(result), part, weight);
}

export function toGroupScore(result: JudgeResult): GroupScore {
  return result.status === 'scored' ? { status: 'scored', scores: result.scores } : { status: 'unscored', reason: result.reason };
}

export interface JudgePartOptions extends JudgeOptions {
  /** The reward part's name (default `judge`). */
  name?: string;
  /** Its weight in the total reward (default 1). */
  weight?: number;
}

/** The judge as a group reward part: scores each finished group's main conversations relative to each other. */
export function judgeRewardPart(options: JudgePartOptions): GroupRewardPart {
  return {
    name: options.name ?? 'judge',
    weight: options.weight ?? 1,
    async scoreGroup(trajectories) {
      return toGroupScore(await judgeGroup(trajectories.map((t) => t.messages), options));
    },
  };
}

/** Judges a group of trajectories (their final main conversations) and applies the result. */
export async function judgeTrajectories(trajectories: Trajectory[], options: JudgeOptions & { part?: string; weight?: number }): Promise<JudgeResult> {
  const result = await judgeGroup(trajectories.map((t) => t.messages), options);
  applyJudgeResult(trajectories, result, options.part, options.weight);
  return result;
}
