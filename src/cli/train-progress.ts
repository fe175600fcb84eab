/**
 * `spindle train`'s live line on stderr: one rewritten line on a terminal, a line every few seconds
 * otherwise; the warm start's steps and the RL steps each with their rate and ETA.
 */
import type { TrainEvent } from '../train/trainer.ts';
import { fmt, pct } from './output.ts';

/** Where the lines go (process.stderr by default; tests pass their own). */
export interface ProgressSink {
  isTTY?: boolean;
  write(text: string): unknown;
}

/** Seconds as `45s` or `13m05s`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** Seconds per unit of work (a step) since a clock started, for the ETA. */
class Pace {
  #startedAt = 0;
  #startDone: number | null = null;

  /**
   * After unit `done` (1-based) ended at `now` (ms). The first call starts the clock: at the start
   * of that unit when its own time is known (`ownSeconds`), so the first ETA already counts it; at
   * its end otherwise. 0 until a unit has been timed.
   */
  perUnit(done: number, now: number, ownSeconds: number | null): number {
    if (this.#startDone === null) {
      this.#startedAt = ownSeconds === null ? now : now - 1000 * ownSeconds;
      this.#startDone = ownSeconds === null ? done : done - 1; // a resumed run's earlier steps are not counted
    }
    const units = done - this.#startDone;
    return units > 0 ? (now - this.#startedAt) / 1000 / units : 0;
  }
}

export function trainProgressPrinter(
  steps: number,
  sink: ProgressSink = process.stderr,
  clock: () => number = () => performance.now(),
): (event: TrainEvent) => void {
  const tty = sink.isTTY === true;
  let last = -Infinity;
  const warmPace = new Pace();
  const rlPace = new Pace();
  const write = (text: string, force: boolean) => {
    const now = clock();
    if (tty) {
      sink.write(`\r\x1b[K${text}`);
      if (force) sink.write('\n');
    } else if (force) {
      sink.write(`${text}\n`);
    } else if (now - last >= 2000) {
      // Only progress lines count for the throttle: a step that ends right after an evaluation's line still shows.
      last = now;
      sink.write(`${text}\n`);
    }
  };
  return (event) => {
    switch (event.type) {
      case 'phase':
        write(`[${event.phase}] ${event.message}`, true);
        break;
      case 'warm-start-step': {
        const perStep = warmPace.perUnit(event.step, clock(), null);
        // maxSteps is a bound: the warm start stops earlier once the format is learned.
        const pace = perStep > 0 ? ` ${(1 / perStep).toFixed(2)} steps/s ETA ≤ ${duration((event.maxSteps - event.step) * perStep)}` : '';
        write(`warm start step ${event.step}/${event.maxSteps} loss ${event.loss.toFixed(4)}${pace}`, false);
        break;
      }
      case 'warm-start-check':
        write(`warm start check at step ${event.check.step}: invalid answers ${pct(event.check.invalidRate)}, sampled return ${fmt(event.check.meanReturn, 3)}`, true);
        break;
      case 'eval':
        write(
          `eval at step ${event.step}: greedy return ${fmt(event.eval.meanReturn)} [${fmt(event.eval.ci95[0])}, ${fmt(event.eval.ci95[1])}]` +
            `${event.eval.exactReturn === null ? '' : `, exact ${fmt(event.eval.exactReturn)}`}, win ${pct(event.eval.winRate)}, invalid ${pct(event.eval.invalidRate)}`,
          true,
        );
        break;
      case 'checkpoint':
        break;
      case 'select': {
        const c = event.candidate;
        const left = event.count - event.index - 1;
        write(
          `validation ${event.index + 1}/${event.count}: ${c.weights === 'average' ? 'the weight average' : `step ${c.weights}'s weights`} ` +
            `greedy return ${fmt(c.meanReturn)} [${fmt(c.ci95[0])}, ${fmt(c.ci95[1])}]${c.failed > 0 ? `, ${c.failed} episodes failed` : ''}` +
            (left > 0 ? ` ETA ${duration(left * event.seconds)}` : ''),
          true,
        );
        break;
      }
      case 'step': {
        const m = event.metrics;
        const perStep = rlPace.perUnit(event.step, clock(), m['time/step_s'] ?? null);
        // KL to the reference when the run has one, else between the sampler and the updated policy (k3, ≥ 0 up to rounding).
        const kl = m['kl/reference'] ?? m['kl/policy'];
        write(
          `step ${event.step}/${steps} reward ${fmt(m['reward/mean'], 3)} win ${pct(m['episodes/win_rate'])} KL ${fmt(kl === undefined ? undefined : Math.max(0, kl), 5)} ` +
            `rollout ${(m['throughput/rollout_tokens_per_s'] ?? 0).toFixed(0)} tok/s train ${(m['throughput/train_tokens_per_s'] ?? 0).toFixed(0)} tok/s ` +
            `episodes ${event.episodes} ETA ${duration((steps - event.step) * perStep)}` +
            // A step that answered illegally often enough to add the format anchor (format-anchor.ts) says so.
            ((m['samples/format_anchor'] ?? 0) > 0 ? ` invalid ${pct(m['actions/invalid_rate'])}: format anchor` : '') +
            tiedGroups(m),
          event.step === steps,
        );
        break;
      }
    }
  };
}

/**
 * Share of a step's groups whose answers tied at which a run is flagged: a group-relative estimator
 * gets no signal from them, so such a step trains little beyond the KL (a bandit run at β 0.03 had
 * 79 of 80 tied from step ~40 and stopped learning; docs/results.md, "Bandit").
 */
const TIED_GROUPS_FLAG = 0.9;

function tiedGroups(m: Record<string, number>): string {
  const groups = m['groups/count'] ?? 0;
  const tied = m['groups/zero_variance'] ?? 0;
  return groups > 0 && tied / groups >= TIED_GROUPS_FLAG ? ` tied ${tied}/${groups} groups: little to train` : '';
}
