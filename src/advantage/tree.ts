/**
 * Tree advantage: per-decision credit from the history a group's samples share. The G samples of a
 * group start from the same seed, so until two of them act differently they see the same
 * observations: their decisions form a tree. At a node (the same observations and actions so far,
 * then the same observation) where the samples took at least two different actions, each action is
 * judged by the mean return-to-go of the samples that took it against the mean of all samples at
 * the node,
 *
 *   A_{i,k} = (mean_{j ∈ node, a_j = a_i} G_{j,k} − mean_{j ∈ node} G_{j,k}) / (σ + ε)
 *
 * with G_{j,k} the return from turn k on and σ the std of the group's episode returns (`scale:
 * 'group'`; `'none'`: no division). A node where every sample acted alike compares nothing and gets
 * 0 (GRPO would hand it the noise of the later decisions' outcomes). Only the sampled outcomes enter:
 * with the cards of a seeded deck, samples that stick at the first decision all get the same return,
 * and the ones that hit are judged by the mean of their own later play.
 *
 * Needs each sample's `decisions` (what it saw and did at every turn; from-trajectories.ts fills
 * them). A tied group (all returns equal) gets 0 everywhere.
 */
import { z } from 'zod';
import { isTied, mean, std } from './moments.ts';
import { returnsToGo, turnRewardsOf, type ScoredGroup, type ScoredSample, type TrajectoryAdvantages } from './types.ts';
import { checkScoredGroups, epsilonOption, parseOptions, stdOption } from './validate.ts';

export const treeOptionsSchema = z.strictObject({
  scale: z.enum(['group', 'none']).default('group'),
  epsilon: epsilonOption,
  std: stdOption,
});
export type TreeOptions = z.input<typeof treeOptionsSchema>;

/** The node key of every turn: the observations and actions before it, then its observation. */
function nodeKeys(sample: ScoredSample, where: string): string[] {
  const turns = turnRewardsOf(sample).length;
  const decisions = sample.decisions;
  if (!decisions || decisions.length !== turns) {
    throw new Error(`tree advantage: ${where}.decisions must list the ${turns} turn(s) of the sample, got ${decisions ? decisions.length : 'none'}`);
  }
  const keys: string[] = [];
  let path = '';
  for (const d of decisions) {
    keys.push(`${path}\u0001${d.state}`);
    path = `${path}\u0001${d.state}\u0002${d.action}`;
  }
  return keys;
}

export function treeAdvantages(groups: readonly ScoredGroup[], options: TreeOptions = {}): TrajectoryAdvantages[] {
  checkScoredGroups(groups);
  const o = parseOptions(treeOptionsSchema, options, 'tree');
  return groups.flatMap((group, g) => {
    const samples = group.samples;
    const keys = samples.map((s, i) => nodeKeys(s, `groups.${g}.samples.${i}`));
    const rewards = samples.map((s) => s.reward);
    if (isTied(rewards)) return samples.map((s, i) => ({ trajectoryId: s.trajectoryId, groupId: group.groupId, turnAdvantages: keys[i].map(() => 0) }));
    const scale = o.scale === 'group' ? std(rewards, o.std) + o.epsilon : 1;
    const togo = samples.map(returnsToGo);

    // node → action → returns-to-go of the samples that took it there
    const nodes = new Map<string, Map<string, number[]>>();
    samples.forEach((s, i) =>
      keys[i].forEach((key, k) => {
        const action = s.decisions![k].action;
        let byAction = nodes.get(key);
        if (!byAction) nodes.set(key, (byAction = new Map()));
        const returns = byAction.get(action);
        if (returns) returns.push(togo[i][k]);
        else byAction.set(action, [togo[i][k]]);
      }),
    );
    const nodeMean = new Map<string, number>();
    for (const [key, byAction] of nodes) nodeMean.set(key, mean([...byAction.values()].flat()));

    return samples.map((s, i) => ({
      trajectoryId: s.trajectoryId,
      groupId: group.groupId,
      turnAdvantages: keys[i].map((key, k) => {
        const byAction = nodes.get(key)!;
        if (byAction.size < 2) return 0;
        return (mean(byAction.get(s.decisions![k].action)!) - nodeMean.get(key)!) / scale;
      }),
    }));
  });
}
