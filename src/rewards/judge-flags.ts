/**
 * `--judge POLICY [--judge-rubric FILE] [--judge-weight W]` (spindle play, spindle proxy): the LLM judge
 * as a group reward part named `judge`. POLICY is an LLM policy (`openai:MODEL` with --base-url,
 * `model:DIR`, `run:RUN[@STEP]`); the rubric file replaces the default rubric.
 */
import { readFileSync } from 'node:fs';
import { UsageError } from '../core/errors.ts';
import type { Policy } from '../policy/policy.ts';
import { resolveLlmPolicy, type ResolverContext } from '../policy/resolve.ts';
import type { GroupRewardPart } from './group-reward.ts';
import { judgeRewardPart } from './judge.ts';
import type { RewardConfig } from './reward.ts';

export interface JudgeFlags {
  judge?: string;
  judgeRubric?: string;
  judgeWeight?: number;
}

export interface ResolvedJudge {
  part: GroupRewardPart;
  /** The judge's policy, to close when the command ends. */
  policy: Policy;
}

function readRubric(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--judge-rubric: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (text.trim().length === 0) throw new UsageError(`--judge-rubric: ${path} is empty`);
  return text.trim();
}

/** The judge part the flags ask for, or null without --judge; every flag is checked before the policy loads. */
export async function judgeFromFlags(flags: JudgeFlags, context: ResolverContext): Promise<ResolvedJudge | null> {
  if (flags.judge === undefined) {
    if (flags.judgeRubric !== undefined) throw new UsageError('--judge-rubric needs --judge POLICY');
    if (flags.judgeWeight !== undefined) throw new UsageError('--judge-weight needs --judge POLICY');
    return null;
  }
  const rubric = flags.judgeRubric === undefined ? undefined : readRubric(flags.judgeRubric);
  const weight = flags.judgeWeight ?? 1;
  if (!Number.isFinite(weight)) throw new UsageError(`--judge-weight: expected a finite number, got ${flags.judgeWeight}`);
  const policy = await resolveLlmPolicy(flags.judge, context, '--judge');
  return { part: judgeRewardPart({ judge: policy, rubric, weight }), policy };
}

/** A reward config with the group parts added (the env's own config, or none). */
export function withGroupParts(rewards: RewardConfig | undefined, parts: readonly GroupRewardPart[]): RewardConfig | undefined {
  if (parts.length === 0) return rewards;
  const base = rewards ?? { fns: [], weights: {} };
  return { ...base, groupParts: [...(base.groupParts ?? []), ...parts] };
}
