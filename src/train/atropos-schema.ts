/**
 * Atropos's ScoredData, the body of `POST /scored_data` (a list of them for `/scored_data_list`),
 * as defined by the pydantic model in NousResearch/atropos atroposlib/api/server.py:
 *
 *   tokens: List[List[int]]; masks: List[List[int]]; scores: List[float]
 *   advantages, ref_logprobs, inference_logprobs: Optional[List[List[float]]]
 *   messages: Optional[List[List[Dict]]] (each with 'role' and 'content'); generation_params: Optional[Dict]
 *   overrides: Optional[List[dict]]; group_overrides: Optional[dict]; images: Optional[Any]; env_id: Optional[int]
 *   distill_token_ids: Optional[List[List[List[int]]]]; distill_logprobs: Optional[List[List[List[float]]]]
 *
 * One ScoredData is one group: entry i of every list is sequence i. Atropos's conventions
 * (atroposlib/api/README.md, envs/server_handling/managed_server.py): masks hold -100 where a
 * position is not trained and the token id itself where it is; per-token lists line up with tokens.
 * Beyond pydantic, this schema checks that every list lines up.
 */
import { z } from 'zod';
import { describeZodError } from '../core/schemas.ts';

export const ATROPOS_UNTRAINED = -100;

const int = z.number().int();
const perToken = z.array(z.array(z.number()));
const nullish = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

export const atroposScoredDataSchema = z
  .strictObject({
    tokens: z.array(z.array(int.min(0))).min(1, 'a group holds at least one sequence'),
    masks: z.array(z.array(int)),
    scores: z.array(z.number()),
    advantages: nullish(perToken),
    ref_logprobs: nullish(perToken),
    inference_logprobs: nullish(perToken),
    messages: nullish(z.array(z.array(z.looseObject({ role: z.string(), content: z.unknown() })))),
    generation_params: nullish(z.record(z.string(), z.unknown())),
    overrides: nullish(z.array(z.record(z.string(), z.unknown()))),
    group_overrides: nullish(z.record(z.string(), z.unknown())),
    images: z.unknown().optional(),
    env_id: nullish(int),
    distill_token_ids: nullish(z.array(z.array(z.array(int)))),
    distill_logprobs: nullish(z.array(z.array(z.array(z.number())))),
  })
  .superRefine((d, ctx) => {
    const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    const n = d.tokens.length;
    const perSequence = ['masks', 'scores', 'advantages', 'ref_logprobs', 'inference_logprobs', 'messages', 'overrides'] as const;
    for (const field of perSequence) {
      const list = d[field];
      if (list != null && list.length !== n) issue([field], `has ${list.length} entries for ${n} sequences`);
    }
    d.tokens.forEach((tokens, i) => {
      for (const field of ['masks', 'advantages', 'ref_logprobs', 'inference_logprobs'] as const) {
        const row = d[field]?.[i];
        if (row && row.length !== tokens.length) issue([field, i], `has ${row.length} entries for ${tokens.length} tokens`);
      }
      const mask = d.masks[i];
      if (!mask || mask.length !== tokens.length) return;
      const bad = mask.findIndex((m, j) => m !== ATROPOS_UNTRAINED && m !== tokens[j]);
      if (bad >= 0) issue(['masks', i, bad], `must be ${ATROPOS_UNTRAINED} or the token id ${tokens[bad]}, got ${mask[bad]}`);
    });
  });

export type AtroposScoredData = z.output<typeof atroposScoredDataSchema>;

/** Checks one ScoredData (ours before sending, or a body received); throws naming the field. */
export function parseAtroposScoredData(value: unknown, what = 'scored_data'): AtroposScoredData {
  const parsed = atroposScoredDataSchema.safeParse(value);
  if (!parsed.success) throw new Error(`atropos ${describeZodError(parsed.error, what)}`);
  return parsed.data;
}
