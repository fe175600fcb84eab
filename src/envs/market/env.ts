/**
 * market: a small trading simulation. A few assets follow seeded geometric Brownian motions with a
 * per-asset drift; each tick the agent buys, sells or waits (and may look up price history), then prices
 * move. The env's reward parts are `pnl` (equity change) and `risk` (a charge on the variance of the
 * tick's PnL); the composite adds `format` and `reasoning` scored from the turn's text (see spec.ts).
 */
import type { ToolSpec } from '../../core/messages.ts';
import { Rng } from '../../core/random.ts';
import type { Action, Env, EnvReset, EnvStep, InvalidActionRule, OracleAdvice } from '../env.ts';
import { bestAction, type ScoredAction } from './oracle.ts';
import type { MarketOptions } from './options.ts';
import { applyTrade, equity, grossExposure, tradeProblem, type Portfolio, type Trade } from './portfolio.ts';
import { drawMarket, expectedMove, type MarketPath } from './prices.ts';
import { renderMarket, renderPriceLookup } from './render.ts';
import { expectedTickReward, riskPart } from './tick-reward.ts';

/** Independent random streams: the assets' parameters never shift the price shocks. */
const PARAM_STREAM = 0;
const SHOCK_STREAM = 1;

export const PRICE_TOOL = 'get_price';
const TRADE_TOOLS = ['buy', 'sell'] as const;
const WAIT_TOOL = 'wait';

export class MarketEnv implements Env {
  readonly kind = 'outcome' as const;
  readonly invalidAction: InvalidActionRule;
  readonly maxTurns: number;
  private path: MarketPath | null = null;
  private tick = 0;
  private portfolio: Portfolio = { cash: 0, positions: [] };
  private last: { action: string; pnl: number; risk: number } | null = null;

  constructor(private readonly options: MarketOptions) {
    this.maxTurns = options.horizon;
    this.invalidAction = { mode: 'retry', penalty: options.invalidPenalty, maxRetries: options.maxRetries };
  }

  reset(seed: number): EnvReset {
    this.path = drawMarket(this.options, new Rng(seed, PARAM_STREAM), new Rng(seed, SHOCK_STREAM));
    this.tick = 0;
    this.portfolio = { cash: this.options.balance, positions: this.path.names.map(() => 0) };
    this.last = null;
    return { observation: this.render(), tools: this.tools(this.path.names) };
  }

  step(action: Action): EnvStep {
    const path = this.requireTick();
    const problem = this.validate(action);
    if (problem) throw new Error(`market: step called with an illegal action: ${problem}`);
    const trade = this.toTrade(action);
    const now = this.prices();
    const held = applyTrade(this.portfolio, trade, now);
    const next = path.prices[this.pathStep() + 1];
    const b = this.options.balance;
    const pnl = (100 * (equity(held, next) - equity(held, now))) / b;
    const risk = riskPart(held.positions, now, path, this.options.riskAversion, b);
    this.portfolio = held;
    this.tick += 1;
    this.last = { action: this.describe(trade, now), pnl, risk };
    const done = this.tick >= this.options.horizon;
    return { observation: this.render(), reward: pnl + risk, rewardParts: { pnl, risk }, done, truncated: false, info: this.accountInfo() };
  }

  validate(action: Action): string | null {
    const path = this.path;
    if (!path) return 'the market has not started';
    const args = action.arguments;
    if (action.name === PRICE_TOOL) return `${PRICE_TOOL} only looks up a price; to act call buy, sell or wait`;
    if (action.name === WAIT_TOOL) return Object.keys(args).length > 0 ? `${WAIT_TOOL} takes no arguments` : null;
    if (action.name !== 'buy' && action.name !== 'sell') return `unknown action '${action.name}'; call buy, sell or wait`;
    const extra = Object.keys(args).filter((k) => k !== 'asset' && k !== 'quantity');
    if (extra.length > 0) return `${action.name} takes only 'asset' and 'quantity' (got ${extra.join(', ')})`;
    const assetProblem = this.assetProblem(args.asset);
    if (assetProblem) return assetProblem;
    const q = args.quantity;
    if (typeof q !== 'number' || !Number.isInteger(q) || q < 1) return `quantity must be a whole number of shares from 1 to ${this.options.maxTrade}`;
    return tradeProblem(this.portfolio, this.toTrade(action), this.prices(), this.options, path.names);
  }

  /** Waiting, then every allowed buy and sell of 1..maxTrade shares of each asset. */
  legalActions(): Action[] {
    if (!this.path) return [];
    const out: Action[] = [{ name: WAIT_TOOL, arguments: {} }];
    for (const asset of this.path.names) {
      for (const side of TRADE_TOOLS) {
        for (let quantity = 1; quantity <= this.options.maxTrade; quantity++) {
          const action = { name: side, arguments: { asset, quantity } };
          if (this.validate(action) === null) out.push(action);
        }
      }
    }
    return out;
  }

  /** The myopic expected-reward maximiser (see oracle.ts), with each asset's expected move as a forecast. */
  oracle(): OracleAdvice {
    const path = this.requireTick();
    const best = bestAction(this.scoreActions(path));
    const forecasts: Record<string, number> = {};
    path.names.forEach((name, i) => (forecasts[`expected_move_${name}`] = expectedMove(path.drifts[i])));
    forecasts.expected_reward = best.expectedReward;
    return { action: best.action, forecasts };
  }

  /** Answers `get_price {asset}` with the recent price history (and outlook when shown). */
  inform(call: Action): string {
    const path = this.path;
    if (!path) return 'the market has not started';
    if (call.name !== PRICE_TOOL) return `unknown lookup '${call.name}'; the lookup tool is ${PRICE_TOOL}`;
    const problem = this.assetProblem(call.arguments.asset);
    if (problem) return problem;
    const asset = path.names.indexOf(call.arguments.asset as string);
    const step = this.pathStep();
    const history = path.prices.slice(step - this.options.historyLength + 1, step + 1).map((p) => p[asset]);
    return renderPriceLookup(path, asset, history, this.options.showOutlook);
  }

  state(): Record<string, unknown> {
    return { tick: this.tick, horizon: this.options.horizon, ...this.accountInfo() };
  }

  /** Exact expected tick reward of every legal action (what the oracle maximises). */
  private scoreActions(path: MarketPath): ScoredAction[] {
    const now = this.prices();
    return this.legalActions().map((action) => {
      const held = applyTrade(this.portfolio, this.toTrade(action), now);
      return { action, expectedReward: expectedTickReward(held.positions, now, path, this.options.riskAversion, this.options.balance) };
    });
  }

  private accountInfo(): Record<string, unknown> {
    const names = this.path?.names ?? [];
    const prices = this.prices();
    const value = equity(this.portfolio, prices);
    return {
      balance: this.portfolio.cash,
      positions: Object.fromEntries(names.map((n, i) => [n, this.portfolio.positions[i]])),
      prices: Object.fromEntries(names.map((n, i) => [n, prices[i]])),
      equity: value,
      pnl: value - this.options.balance,
      /** Gross position value as a fraction of the starting balance. */
      exposure: grossExposure(this.portfolio, prices) / this.options.balance,
    };
  }

  private assetProblem(asset: unknown): string | null {
    const names = this.path?.names ?? [];
    return typeof asset === 'string' && names.includes(asset) ? null : `asset must be one of ${names.join(', ')} (got ${JSON.stringify(asset)})`;
  }

  private toTrade(action: Action): Trade {
    if (action.name === WAIT_TOOL) return null;
    return {
      side: action.name as 'buy' | 'sell',
      asset: this.path!.names.indexOf(action.arguments.asset as string),
      quantity: action.arguments.quantity as number,
    };
  }

  private describe(trade: Trade, prices: readonly number[]): string {
    if (!trade) return 'you waited';
    const verb = trade.side === 'buy' ? 'bought' : 'sold';
    return `you ${verb} ${trade.quantity} ${this.path!.names[trade.asset]} at ${prices[trade.asset].toFixed(2)}`;
  }

  /** Index into the price path of the current tick (the path starts with `historyLength` past prices). */
  private pathStep(): number {
    return this.options.historyLength + this.tick;
  }

  private prices(): number[] {
    return this.path?.prices[this.pathStep()] ?? [];
  }

  private tools(names: string[]): ToolSpec[] {
    const asset = { type: 'string', enum: names, description: 'asset name' };
    const quantity = { type: 'integer', minimum: 1, maximum: this.options.maxTrade, description: 'number of shares' };
    const trade = (name: string, description: string): ToolSpec => ({
      name,
      description,
      parameters: { type: 'object', properties: { asset, quantity }, required: ['asset', 'quantity'], additionalProperties: false },
    });
    return [
      {
        name: PRICE_TOOL,
        description: 'Look up an asset\'s recent prices. Does not use up your turn.',
        parameters: { type: 'object', properties: { asset }, required: ['asset'], additionalProperties: false },
        informational: true,
      },
      trade('buy', 'Buy shares at the current price (covers a short position first).'),
      trade('sell', this.options.allowShort ? 'Sell shares at the current price (below zero you go short).' : 'Sell shares you hold at the current price.'),
      { name: WAIT_TOOL, description: 'Do nothing this tick.', parameters: { type: 'object', properties: {}, additionalProperties: false } },
    ];
  }

  private render(): string {
    const prices = this.prices();
    return renderMarket({
      tick: this.tick,
      horizon: this.options.horizon,
      path: this.path!,
      prices,
      cash: this.portfolio.cash,
      positions: this.portfolio.positions,
      equity: equity(this.portfolio, prices),
      balance: this.options.balance,
      gross: grossExposure(this.portfolio, prices),
      showOutlook: this.options.showOutlook,
      maxTrade: this.options.maxTrade,
      maxPosition: this.options.maxPosition,
      allowShort: this.options.allowShort,
      last: this.last,
    });
  }

  private requireTick(): MarketPath {
    if (!this.path) throw new Error('market: call reset(seed) before using the env');
    if (this.tick >= this.options.horizon) throw new Error('market: the episode is over; call reset(seed)');
    return this.path;
  }
}
