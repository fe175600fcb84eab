/**
 * The env's own per-episode metrics (e.g. the bandit's `regret`): numeric entries of `info.metrics`
 * on the steps of an episode (a later step's value of a name replaces an earlier one), averaged per
 * policy over the episodes that did not fail and reported it.
 */
import type { Trajectory } from '../core/trajectory.ts';

export interface EnvMetricsReport {
  /** Mean of each metric over the episodes that reported it. */
  means: Record<string, number>;
  /** How many episodes reported each metric. */
  counts: Record<string, number>;
}

/** The finite numbers under `info.metrics` of an episode's steps. */
export function episodeEnvMetrics(trajectory: Trajectory): Record<string, number> {
  const out: Record<string, number> = {};
  for (const turn of trajectory.turns) {
    const metrics: unknown = turn.info.metrics;
    if (typeof metrics !== 'object' || metrics === null || Array.isArray(metrics)) continue;
    for (const [name, value] of Object.entries(metrics)) {
      if (typeof value === 'number' && Number.isFinite(value)) out[name] = value;
    }
  }
  return out;
}

/** Sums one trajectory at a time, so an evaluation need not keep its trajectories. */
export class EnvMetricTally {
  private readonly sums: Record<string, number> = {};
  private readonly counts: Record<string, number> = {};

  add(trajectory: Trajectory): void {
    if (trajectory.status === 'failed') return;
    for (const [name, value] of Object.entries(episodeEnvMetrics(trajectory))) {
      this.sums[name] = (this.sums[name] ?? 0) + value;
      this.counts[name] = (this.counts[name] ?? 0) + 1;
    }
  }

  report(): EnvMetricsReport {
    const names = Object.keys(this.sums).sort();
    return {
      means: Object.fromEntries(names.map((name) => [name, this.sums[name] / this.counts[name]])),
      counts: Object.fromEntries(names.map((name) => [name, this.counts[name]])),
    };
  }
}
