/**
 * Training samples → Atropos ScoredData (see atropos-schema.ts), one per group, so an existing
 * Atropos trainer can consume Spindle's data. Per sequence i of a group:
 *
 *   tokens[i]              the sample's tokens
 *   masks[i][j]            tokens[i][j] where trained, -100 elsewhere (Atropos's convention)
 *   scores[i]              the episode's total reward (what a scores-only trainer normalises)
 *   advantages[i][j]       Spindle's per-token advantage, 0 where not trained
 *   inference_logprobs[i]  the sampling logprob where trained, 1.0 elsewhere: Atropos's placeholder
 *                          for masked positions (api/README.md; ManagedServer writes 1.0 for prompt
 *                          tokens; example_trainer/data.py pads with it)
 *   overrides[i]           { trajectory_id, sample_id, policy_version, truncated }
 *   group_overrides        { group_id, group_size } (group_size = the number of sequences, which
 *                          atroposlib's BaseEnv checks; packing fallbacks can make it differ from G)
 *   messages[i]            when trajectories are given: the conversation of the sequence's last call
 *                          (its prompt messages, then the sampled text as the assistant message)
 *   generation_params      as given, or when trajectories are given the calls' one recorded temperature
 */
import type { Message } from '../core/messages.ts';
import type { Trajectory } from '../core/trajectory.ts';
import { encodeJsonl } from './jsonl.ts';
import { ATROPOS_UNTRAINED, atroposScoredDataSchema, parseAtroposScoredData, type AtroposScoredData } from './atropos-schema.ts';
import { recordedTemperatures } from './recorded-temperature.ts';
import type { TrainingSample } from './samples-types.ts';

/** Atropos's inference_logprobs value at positions that are not trained. */
export const ATROPOS_MASKED_LOGPROB = 1.0;

export interface AtroposExportOptions {
  /** The trajectories the samples came from; when given, `messages` is filled in. */
  trajectories?: readonly Trajectory[];
  /**
   * Sent as `generation_params` (e.g. { temperature }); Atropos's trainer reads temperature from it.
   * Default with `trajectories`: { temperature } where every call behind a group's samples recorded
   * the same temperature above 0 (LlmCall.sampling), else none.
   */
  generationParams?: Record<string, unknown>;
  /** Merged into every group's `group_overrides` (group_id and group_size are always Spindle's). */
  groupOverrides?: Record<string, unknown>;
  /** The id Atropos gave the env at /register-env. */
  envId?: number;
}

export function toAtroposScoredData(samples: readonly TrainingSample[], options: AtroposExportOptions = {}): AtroposScoredData[] {
  const groups = new Map<string, TrainingSample[]>();
  for (const sample of samples) {
    const members = groups.get(sample.groupId);
    if (members) members.push(sample);
    else groups.set(sample.groupId, [sample]);
  }
  const trajectories = options.trajectories ? new Map(options.trajectories.map((t) => [t.id, t])) : null;

  return [...groups].map(([groupId, members], g) => {
    const data: AtroposScoredData = {
      tokens: members.map((s) => s.tokens),
      masks: members.map((s) => s.tokens.map((id, j) => (s.lossMask[j] === 1 ? id : ATROPOS_UNTRAINED))),
      scores: members.map((s) => s.score),
      advantages: members.map((s) => s.advantages),
      inference_logprobs: members.map((s) => s.logprobs.map((lp, j) => (s.lossMask[j] === 1 ? lp : ATROPOS_MASKED_LOGPROB))),
      overrides: members.map((s) => ({
        trajectory_id: s.trajectoryId,
        sample_id: s.id,
        policy_version: s.policyVersion,
        truncated: s.spans.some((span) => span.truncation !== null),
      })),
      group_overrides: { ...options.groupOverrides, group_id: groupId, group_size: members.length },
    };
    if (trajectories) data.messages = members.map((s) => sequenceMessages(s, trajectories));
    const generationParams = options.generationParams ?? (trajectories ? recordedTemperature(members, trajectories) : undefined);
    if (generationParams) data.generation_params = generationParams;
    if (options.envId !== undefined) data.env_id = options.envId;
    return parseAtroposScoredData(data, `scored_data.${g}`);
  });
}

/** One ScoredData per line (each checked), e.g. to replay into /scored_data later. */
export function atroposToJsonl(groups: readonly AtroposScoredData[]): string {
  return encodeJsonl(groups, atroposScoredDataSchema, 'scored_data');
}

/** { temperature } when every call behind these samples recorded one and the same temperature above 0. */
function recordedTemperature(samples: readonly TrainingSample[], trajectories: ReadonlyMap<string, Trajectory>): { temperature: number } | undefined {
  const temperatures = recordedTemperatures(samples, trajectories);
  const [only] = temperatures;
  return temperatures.size === 1 && only !== null && only > 0 ? { temperature: only } : undefined;
}

type AtroposMessage = { role: string; content: string; [key: string]: unknown };

function sequenceMessages(sample: TrainingSample, trajectories: ReadonlyMap<string, Trajectory>): AtroposMessage[] {
  const last = sample.spans[sample.spans.length - 1];
  const call = trajectories.get(sample.trajectoryId)?.turns[last.turn]?.calls[last.call];
  if (!call) {
    throw new Error(`atropos export: sample ${sample.id}: trajectory '${sample.trajectoryId}' turn ${last.turn} call ${last.call} not found among the trajectories given`);
  }
  return [...call.messages.map(atroposMessage), { role: 'assistant', content: call.completion.text }];
}

/** OpenAI-style message dict (Atropos requires role and content). */
function atroposMessage(m: Message): AtroposMessage {
  const out: AtroposMessage = { role: m.role, content: m.content };
  if (m.toolCalls?.length) {
    out.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
  }
  if (m.toolCallId !== undefined) out.tool_call_id = m.toolCallId;
  if (m.name !== undefined) out.name = m.name;
  return out;
}
