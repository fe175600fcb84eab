/**
 * A custom environment in a user's own module: guess a hidden number with higher/lower feedback.
 * Run it with:  npx spindle play --env ./examples/guess-number.ts --policy oracle --episodes 1000
 */
import { z, type Action, type Env, type EnvSpec } from 'spindle';
import { Rng } from 'spindle';

const options = z
  .object({
    max: z.number().int().min(2).max(1000).default(32),
    maxGuesses: z.number().int().min(1).max(50).default(8),
  })
  .strict();
type Options = z.infer<typeof options>;

class GuessNumber implements Env {
  readonly kind = 'outcome' as const;
  readonly invalidAction = { mode: 'retry' as const, penalty: -1, maxRetries: 2 };
  private secret = 0;
  private low = 1;
  private high = 1;
  private guesses = 0;

  constructor(private readonly opts: Options) {}

  reset(seed: number) {
    this.secret = 1 + new Rng(seed).int(this.opts.max);
    this.low = 1;
    this.high = this.opts.max;
    this.guesses = 0;
    return {
      observation: `I picked a number from 1 to ${this.opts.max}. You have ${this.opts.maxGuesses} guesses.`,
      tools: [
        {
          name: 'guess',
          description: 'Guess the number.',
          parameters: {
            type: 'object',
            properties: { n: { type: 'integer', minimum: 1, maximum: this.opts.max } },
            required: ['n'],
          },
        },
      ],
    };
  }

  validate(action: Action): string | null {
    const n = action.arguments.n;
    if (action.name !== 'guess') return `unknown action ${action.name}; use guess`;
    if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > this.opts.max) return `n must be an integer from 1 to ${this.opts.max}`;
    return null;
  }

  step(action: Action) {
    const n = action.arguments.n as number;
    this.guesses++;
    if (n === this.secret) return { observation: `${n} is right!`, reward: 1, done: true, truncated: false, info: { outcome: 'win' } };
    if (n < this.secret) this.low = Math.max(this.low, n + 1);
    else this.high = Math.min(this.high, n - 1);
    const out = this.guesses >= this.opts.maxGuesses;
    return {
      observation: out ? `${n} is wrong; no guesses left. It was ${this.secret}.` : `${n} is too ${n < this.secret ? 'low' : 'high'}.`,
      reward: out ? -1 : 0,
      done: out,
      truncated: false,
      info: out ? { outcome: 'loss' } : {},
    };
  }

  legalActions(): Action[] {
    return Array.from({ length: this.opts.max }, (_, i) => ({ name: 'guess', arguments: { n: i + 1 } }));
  }

  state() {
    return { low: this.low, high: this.high, guesses: this.guesses };
  }

  /** Binary search over what the feedback still allows. */
  oracle() {
    return { action: { name: 'guess', arguments: { n: Math.floor((this.low + this.high) / 2) } } };
  }
}

const spec: EnvSpec<Options> = {
  name: 'guess-number',
  description: 'Guess a hidden number with higher/lower feedback (an example user env)',
  kind: 'outcome',
  options,
  create: (opts) => new GuessNumber(opts),
  instructions: (opts) => `Find the hidden number from 1 to ${opts.max} in at most ${opts.maxGuesses} guesses. After each guess you are told whether it is too low or too high.`,
};

export default spec;
