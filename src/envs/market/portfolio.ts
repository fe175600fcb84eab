/** Cash and positions: trading rules (limits, cash, shorting) and marking to market. */

export interface Portfolio {
  cash: number;
  /** Shares per asset; negative when short. */
  positions: number[];
}

/** A buy or sell of one asset; `null` is waiting. */
export type Trade = { side: 'buy' | 'sell'; asset: number; quantity: number } | null;

export interface TradeLimits {
  maxTrade: number;
  maxPosition: number;
  allowShort: boolean;
}

const money = (x: number): string => x.toFixed(2);

/** Why the trade is not allowed now, or null. */
export function tradeProblem(p: Portfolio, trade: Trade, prices: readonly number[], limits: TradeLimits, names: readonly string[]): string | null {
  if (!trade) return null;
  const { side, asset, quantity } = trade;
  if (quantity > limits.maxTrade) return `quantity must be at most ${limits.maxTrade} per trade (got ${quantity})`;
  const after = p.positions[asset] + (side === 'buy' ? quantity : -quantity);
  if (after > limits.maxPosition) return `position in ${names[asset]} would be ${after}, above the limit of ${limits.maxPosition}`;
  if (after < -limits.maxPosition) return `position in ${names[asset]} would be ${after}, below the limit of -${limits.maxPosition}`;
  if (after < 0 && !limits.allowShort) return `short selling is not allowed: you hold ${p.positions[asset]} ${names[asset]}`;
  const cost = quantity * prices[asset];
  if (side === 'buy' && cost > p.cash + 1e-9) return `buying ${quantity} ${names[asset]} costs ${money(cost)} but your balance is ${money(p.cash)}`;
  return null;
}

export function applyTrade(p: Portfolio, trade: Trade, prices: readonly number[]): Portfolio {
  if (!trade) return { cash: p.cash, positions: [...p.positions] };
  const signed = trade.side === 'buy' ? trade.quantity : -trade.quantity;
  const positions = [...p.positions];
  positions[trade.asset] += signed;
  return { cash: p.cash - signed * prices[trade.asset], positions };
}

/** Cash plus positions marked at `prices`. */
export function equity(p: Portfolio, prices: readonly number[]): number {
  return p.positions.reduce((sum, q, i) => sum + q * prices[i], p.cash);
}

/** Σ |shares × price|: the value at risk in either direction. */
export function grossExposure(p: Portfolio, prices: readonly number[]): number {
  return p.positions.reduce((sum, q, i) => sum + Math.abs(q * prices[i]), 0);
}
