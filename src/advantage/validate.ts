/** Where data and options enter the estimators: checked here, with errors that name the field. */
import { z } from 'zod';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';
import type { ScoredGroup } from './types.ts';

// zod 4's z.number() already rejects NaN and ±Infinity.
const scoredGroupsSchema = z.array(
  z.object({
    groupId: z.string().min(1),
    samples: z
      .array(
        z.object({
          trajectoryId: z.string().min(1),
          reward: z.number(),
          turnRewards: z.array(z.number()).optional(),
          decisions: z.array(z.object({ state: z.string(), action: z.string(), envState: z.string().optional() })).optional(),
        }),
      )
      .min(1, 'a group needs at least one sample'),
  }),
);

/** Throws unless every reward is finite and every group and trajectory id is present and unique. */
export function checkScoredGroups(groups: readonly ScoredGroup[]): void {
  const parsed = scoredGroupsSchema.safeParse(groups);
  if (!parsed.success) throw new Error(`advantage input: ${describeZodError(parsed.error, 'groups')}`);
  const groupIds = new Set<string>();
  const trajectoryIds = new Set<string>();
  groups.forEach((group, g) => {
    if (groupIds.has(group.groupId)) {
      throw new Error(`advantage input: groups.${g}.groupId: '${group.groupId}' appears in more than one group`);
    }
    groupIds.add(group.groupId);
    group.samples.forEach((sample, i) => {
      if (trajectoryIds.has(sample.trajectoryId)) {
        throw new Error(
          `advantage input: groups.${g}.samples.${i}.trajectoryId: '${sample.trajectoryId}' appears twice in the batch`,
        );
      }
      trajectoryIds.add(sample.trajectoryId);
    });
  });
}

/** Parses estimator options (user config): a bad or unknown field is a UsageError naming `name.field`. */
export function parseOptions<S extends z.ZodType>(schema: S, options: unknown, name: string): z.output<S> {
  const parsed = schema.safeParse(options ?? {});
  if (!parsed.success) throw new UsageError(`advantage options: ${describeZodError(parsed.error, name)}`);
  return parsed.data;
}

/** Option fields several estimators share. */
export const epsilonOption = z.number().min(0, 'epsilon must be ≥ 0').default(1e-4);
export const stdOption = z.enum(['sample', 'population']).default('sample');
