/** A seeded hidden Markov model with readable parameters: probabilities in hundredths, sticky states. */
import type { Rng } from '../../core/random.ts';

export interface HmmModel {
  /** Hidden state names (A, B, ...). */
  states: string[];
  /** Signal names (x, y, ...). */
  symbols: string[];
  /** transition[i][j] = P(next state j | state i). */
  transition: number[][];
  /** emission[k][s] = P(signal s | state k). */
  emission: number[][];
  /** Distribution of the first hidden state. */
  initial: number[];
}

export const STATE_NAMES = ['A', 'B', 'C', 'D'];
export const SYMBOL_NAMES = ['x', 'y', 'z', 'w'];

export interface ModelDraw {
  states: number;
  symbols: number;
  /** Range of P(stay in the same state), in hundredths. */
  stay: readonly [number, number];
  /** Range of P(a state's own signal), in hundredths. */
  clarity: readonly [number, number];
  /** Whose own signal is which: drawn per episode, or state k's is signal k. */
  ownSignals?: 'random' | 'fixed';
}

/** Splits `total` hundredths into `parts` non-negative whole parts at uniformly drawn cut points. */
function split(total: number, parts: number, rng: Rng): number[] {
  const cuts = Array.from({ length: parts - 1 }, () => rng.int(total + 1)).sort((a, b) => a - b);
  const bounds = [0, ...cuts, total];
  return Array.from({ length: parts }, (_, k) => bounds[k + 1] - bounds[k]);
}

/** A row with `main` hundredths at `at` and the rest split over the other entries, as probabilities. */
function row(size: number, at: number, main: number, rng: Rng): number[] {
  const rest = split(100 - main, size - 1, rng);
  return Array.from({ length: size }, (_, k) => (k === at ? main : rest[k < at ? k : k - 1]) / 100);
}

const between = ([lo, hi]: readonly [number, number], rng: Rng): number => lo + rng.int(hi - lo + 1);

/** Each state is sticky and has its own most likely signal (a random one per episode, unless `ownSignals` is 'fixed'). */
export function drawModel(d: ModelDraw, rng: Rng): HmmModel {
  const own = Array.from({ length: d.symbols }, (_, k) => k);
  for (let i = d.ownSignals === 'fixed' ? 0 : own.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [own[i], own[j]] = [own[j], own[i]];
  }
  const transition = Array.from({ length: d.states }, (_, i) => row(d.states, i, between(d.stay, rng), rng));
  const emission = Array.from({ length: d.states }, (_, k) => row(d.symbols, own[k], between(d.clarity, rng), rng));
  return {
    states: STATE_NAMES.slice(0, d.states),
    symbols: SYMBOL_NAMES.slice(0, d.symbols),
    transition,
    emission,
    initial: new Array<number>(d.states).fill(1 / d.states),
  };
}
