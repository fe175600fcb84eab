/** The hmm's simple baseline: name the state most likely to emit the latest signal, ignoring the past. */
import { argmax, legalActionWhere } from '../baseline-rules.ts';
import type { EnvBaseline } from '../env.ts';

export const hmmBaselines: Record<string, EnvBaseline> = {
  'likeliest-emitter': {
    description: 'name the state with the highest P(latest signal | state), ignoring earlier signals and the transitions',
    choose(view) {
      const { states, symbols, emission, signals } = view.state() as { states: string[]; symbols: string[]; emission: number[][]; signals: string[] };
      const symbol = symbols.indexOf(signals[signals.length - 1]);
      if (symbol === -1) throw new Error("baseline 'likeliest-emitter': no signal seen yet");
      const state = states[argmax(emission.map((row) => row[symbol]))];
      return legalActionWhere(view, 'likeliest-emitter', (a) => a.arguments.state === state, `naming ${state}`);
    },
  },
};
