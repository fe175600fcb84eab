/**
 * The shape of a TrainingSample, checked where samples leave or enter (JSONL): field types, and
 * that every per-token array lines up with `tokens` and agrees with the spans, position by position.
 */
import { z } from 'zod';
import type { TrainingSample } from './samples-types.ts';

const tokenId = z.number().int().min(0);
const finite = z.number(); // zod 4 rejects NaN and ±Infinity
const count = z.number().int().min(0);

const spanSchema = z.strictObject({
  start: count,
  end: count,
  turn: count,
  call: count,
  advantage: finite,
  policyVersion: count,
  finishReason: z.enum(['stop', 'length', 'tool_calls', 'timeout', 'error']),
  truncation: z.enum(['length', 'episode']).nullable(),
  exactIds: z.boolean(),
});

export const trainingSampleSchema = z
  .strictObject({
    id: z.string().min(1),
    trajectoryId: z.string().min(1),
    groupId: z.string().min(1),
    score: finite,
    tokens: z.array(tokenId).min(1),
    lossMask: z.array(z.union([z.literal(0), z.literal(1)])),
    advantages: z.array(finite),
    logprobs: z.array(finite),
    policyVersion: count,
    spans: z.array(spanSchema).min(1, 'a sample trains at least one span'),
    weight: z.number().int().min(1).optional(),
  })
  .superRefine((s, ctx) => {
    const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    const n = s.tokens.length;
    for (const field of ['lossMask', 'advantages', 'logprobs'] as const) {
      if (s[field].length !== n) return issue([field], `has ${s[field].length} entries for ${n} tokens`);
    }
    // Where each position belongs: the index of its span, or -1.
    const owner = new Array<number>(n).fill(-1);
    let previousEnd = 0;
    for (const [k, span] of s.spans.entries()) {
      if (span.start >= span.end) return issue(['spans', k], `start ${span.start} must be below end ${span.end}`);
      if (span.start < previousEnd) return issue(['spans', k, 'start'], `${span.start} overlaps or precedes the span before (ends at ${previousEnd})`);
      if (span.end > n) return issue(['spans', k, 'end'], `${span.end} is past the last token (${n})`);
      owner.fill(k, span.start, span.end);
      previousEnd = span.end;
    }
    for (let i = 0; i < n; i++) {
      const span = owner[i] >= 0 ? s.spans[owner[i]] : null;
      if (s.lossMask[i] !== (span ? 1 : 0)) return issue(['lossMask', i], `must be ${span ? 1 : 0}: position ${i} is ${span ? 'in' : 'outside'} a span`);
      const advantage = span ? span.advantage : 0;
      if (s.advantages[i] !== advantage) return issue(['advantages', i], `must be ${advantage}, got ${s.advantages[i]}`);
      if (!span && s.logprobs[i] !== 0) return issue(['logprobs', i], `must be 0 outside a span, got ${s.logprobs[i]}`);
    }
    const oldest = Math.min(...s.spans.map((span) => span.policyVersion));
    if (s.policyVersion !== oldest) issue(['policyVersion'], `must be the oldest span's version (${oldest}), got ${s.policyVersion}`);
  });

// The schema and the type describe the same record; this fails to compile if they drift apart.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _inSync: Same<z.output<typeof trainingSampleSchema>, TrainingSample> = true;
