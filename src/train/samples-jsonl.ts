/**
 * Training samples as JSON Lines: one TrainingSample per line, every field as in samples-types.ts:
 *
 *   id            `${trajectoryId}:${turn}.${call}` of the first trained call
 *   trajectoryId, groupId
 *   score         the episode's total reward
 *   tokens        prompt ids as the sampler saw them, then the sampled ids (several spans when packed)
 *   lossMask      1 on sampled tokens, 0 elsewhere          ┐
 *   advantages    the span's advantage, 0 elsewhere          ├ one entry per token; entry i is about
 *   logprobs      sampling logprob, 0 elsewhere              ┘ token i as a target (shift by one to train)
 *   policyVersion the oldest weights version among the spans
 *   spans         [{ start, end, turn, call, advantage, policyVersion, finishReason, truncation, exactIds }]
 *
 * Lines are checked (lengths, spans and masks agree) when written and when read.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { decodeJsonl, encodeJsonl } from './jsonl.ts';
import { trainingSampleSchema } from './samples-schema.ts';
import type { TrainingSample } from './samples-types.ts';

export function samplesToJsonl(samples: readonly TrainingSample[]): string {
  return encodeJsonl(samples, trainingSampleSchema, 'samples');
}

export function samplesFromJsonl(text: string): TrainingSample[] {
  return decodeJsonl(text, trainingSampleSchema, 'samples');
}

export async function writeSamplesJsonl(file: string, samples: readonly TrainingSample[]): Promise<void> {
  await writeFile(file, samplesToJsonl(samples), 'utf8');
}

export async function readSamplesJsonl(file: string): Promise<TrainingSample[]> {
  return samplesFromJsonl(await readFile(file, 'utf8'));
}
