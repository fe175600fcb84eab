/** Nim against a scripted opponent (perfect or random); taking the last object wins. */
import { Rng } from '../../core/random.ts';
import type { ToolSpec } from '../../core/messages.ts';
import type { Action, Env, EnvReset, EnvStep, InvalidActionRule, OracleAdvice } from '../env.ts';
import { nimTools, parseTake, takeAction } from './actions.ts';
import { nimOracle } from './oracle.ts';
import type { NimOptions } from './options.ts';
import { applyMove, isCleared, legalMoves, perfectMove, type NimMove } from './rules.ts';
import { drawStart } from './starts.ts';

/** Rng streams under the episode seed. */
const START_STREAM = 1;
const OPPONENT_STREAM = 2;

function describeHeaps(heaps: readonly number[]): string {
  return heaps.map((h, i) => `${i === 0 ? 'Heap' : 'heap'} ${i + 1}: ${h}`).join(', ') + '.';
}

function describeMove(who: 'You' | 'Opponent', move: NimMove, last: boolean): string {
  return `${who} took ${move.count} from heap ${move.heap + 1}${last ? ', the last object' : ''}.`;
}

export class NimEnv implements Env {
  readonly kind = 'outcome' as const;
  readonly invalidAction: InvalidActionRule = { mode: 'retry', penalty: -1, maxRetries: 2 };
  readonly maxTurns: number;

  private heaps: number[] = [];
  private opponentRng: Rng | null = null;
  private done = true;
  private readonly tools: ToolSpec[];

  constructor(private readonly options: NimOptions) {
    const count = options.heaps === 'random' ? options.heapCount : options.heaps.length;
    const total = options.heaps === 'random' ? options.heapCount * options.maxHeap : options.heaps.reduce((a, b) => a + b, 0);
    this.maxTurns = Math.ceil(total / 2);
    this.tools = nimTools(count);
  }

  reset(seed: number): EnvReset {
    const { heaps, agentFirst } = drawStart(this.options, new Rng(seed, START_STREAM));
    this.heaps = heaps;
    this.opponentRng = new Rng(seed, OPPONENT_STREAM);
    this.done = false;
    const startHeaps = [...this.heaps];
    let opening = '';
    if (!agentFirst) {
      // Options guarantee 2+ heaps here, so one move cannot clear the table.
      const move = this.opponentMove();
      this.heaps = applyMove(this.heaps, move);
      opening = describeMove('Opponent', move, false) + ' ';
    }
    return {
      observation: `${opening}${describeHeaps(this.heaps)} Your move.`,
      tools: this.tools,
      info: { startHeaps, first: agentFirst ? 'agent' : 'opponent' },
    };
  }

  validate(action: Action): string | null {
    if (this.done) return 'the game is over';
    const parsed = parseTake(this.heaps, action);
    return 'error' in parsed ? parsed.error : null;
  }

  step(action: Action): EnvStep {
    if (this.done) throw new Error('nim step: the game is over');
    const parsed = parseTake(this.heaps, action);
    if ('error' in parsed) throw new Error(`nim step: ${parsed.error}`);
    this.heaps = applyMove(this.heaps, parsed.move);
    if (isCleared(this.heaps)) return this.finish(describeMove('You', parsed.move, true), 1);
    const reply = this.opponentMove();
    this.heaps = applyMove(this.heaps, reply);
    const mine = describeMove('You', parsed.move, false);
    if (isCleared(this.heaps)) return this.finish(`${mine} ${describeMove('Opponent', reply, true)}`, -1);
    return {
      observation: `${mine} ${describeMove('Opponent', reply, false)} ${describeHeaps(this.heaps)} Your move.`,
      reward: 0,
      rewardParts: { outcome: 0 },
      done: false,
      truncated: false,
    };
  }

  legalActions(): Action[] {
    return this.done ? [] : legalMoves(this.heaps).map(takeAction);
  }

  state(): Record<string, unknown> & { heaps: number[] } {
    return { heaps: [...this.heaps] };
  }

  oracle(): OracleAdvice {
    if (this.done || this.heaps.length === 0) throw new Error('nim oracle: no decision (call reset, or the game is over)');
    return nimOracle(this.heaps, this.options.opponent);
  }

  private opponentMove(): NimMove {
    if (this.options.opponent === 'optimal') return perfectMove(this.heaps);
    const moves = legalMoves(this.heaps);
    return moves[this.opponentRng!.int(moves.length)];
  }

  private finish(text: string, reward: number): EnvStep {
    this.done = true;
    const outcome = reward > 0 ? 'win' : 'loss';
    return {
      observation: `${text} You ${outcome === 'win' ? 'win (+1)' : 'lose (-1)'}.`,
      reward,
      rewardParts: { outcome: reward },
      done: true,
      truncated: false,
      info: { outcome },
    };
  }
}
