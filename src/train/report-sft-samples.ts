/**
 * Supervised samples for report questions (train config `report.mode` 'supervised'): for every
 * decision that recorded a report, the prompt exactly as the sampler saw it (its recorded ids) and,
 * as the target, the answer the oracle would give there: the action the agent took with its report
 * arguments replaced by the oracle's targets (reportTargetCall), written as the chat template writes
 * an assistant tool call, through the end-of-turn token (assistantCompletionText, as the warm start's
 * demonstrations; the compact `reportTargetCallText` is not what the template writes). Only those
 * completion tokens are targets (sftMask); lossMask is 0, so the samples add nothing to the RL term.
 *
 * The target holds the action call alone, not the free text or reasoning the model wrote with it:
 * it is the oracle's answer, and the default model writes bare calls. Each decision is its own
 * sample (the next decision's prompt holds the model's answer, not the target, so they cannot be
 * packed into one sequence).
 */
import type { Trajectory } from '../core/trajectory.ts';
import { assistantCompletionText, type CompletionTextAssets } from '../model/assistant-completion-text.ts';
import { reportTargetCall } from '../rewards/report-target-text.ts';
import type { LayoutSample } from './rl-batch.ts';

export interface ReportSftStats {
  /** Decisions that recorded a report. */
  decisions: number;
  samples: number;
  /** Σ sample lengths. */
  tokens: number;
  /** Σ supervised target tokens. */
  targetTokens: number;
  /** Decisions left out: their prompt ids are missing or not the sampler's exact ids. */
  withoutExactIds: number;
}

const isTokenId = (id: number): boolean => Number.isInteger(id) && id >= 0;

export function reportSftSamples(trajectories: readonly Trajectory[], assets: CompletionTextAssets): { samples: LayoutSample[]; stats: ReportSftStats } {
  const samples: LayoutSample[] = [];
  const stats: ReportSftStats = { decisions: 0, samples: 0, tokens: 0, targetTokens: 0, withoutExactIds: 0 };
  for (const trajectory of trajectories) {
    for (const turn of trajectory.turns) {
      const target = reportTargetCall(turn);
      if (!target) continue;
      stats.decisions++;
      // The call that made the action is the turn's last (informational rounds and retries come before it).
      const call = turn.calls.at(-1);
      const promptIds = call?.completion.promptTokenIds;
      if (!call || !promptIds || !call.completion.tokenIdsExact || !promptIds.every(isTokenId)) {
        stats.withoutExactIds++;
        continue;
      }
      const text = assistantCompletionText(assets, call.messages, call.tools, { role: 'assistant', content: '', toolCalls: [target] });
      const completionIds = assets.tokenizer.encode(text);
      const last = completionIds.at(-1);
      if (last === undefined || !assets.stopTokenIds.includes(last)) {
        throw new Error(`report target of trajectory '${trajectory.id}' turn ${turn.index}: its ids do not end with an end-of-turn id`);
      }
      const tokens = [...promptIds, ...completionIds];
      samples.push({
        tokens,
        lossMask: tokens.map(() => 0),
        sftMask: tokens.map((_, i) => (i >= promptIds.length ? 1 : 0)),
      });
      stats.tokens += tokens.length;
      stats.targetTokens += completionIds.length;
    }
  }
  stats.samples = samples.length;
  return { samples, stats };
}
