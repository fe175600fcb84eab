/** The market env's observations and price look-ups, as short text for an LLM. */
import { expectedMove, type MarketPath } from './prices.ts';

export interface MarketView {
  tick: number;
  horizon: number;
  path: MarketPath;
  /** Current prices. */
  prices: readonly number[];
  cash: number;
  positions: readonly number[];
  equity: number;
  balance: number;
  gross: number;
  showOutlook: boolean;
  maxTrade: number;
  maxPosition: number;
  allowShort: boolean;
  /** What happened on the tick just played. */
  last: { action: string; pnl: number; risk: number } | null;
}

const money = (x: number): string => x.toFixed(2);
const signed = (x: number, digits = 2): string => (x >= 0 ? '+' : '') + x.toFixed(digits);

export function describeOutlook(path: MarketPath, i: number): string {
  return `expected move ${signed(100 * expectedMove(path.drifts[i]))}%/tick, volatility ${(100 * path.vols[i]).toFixed(1)}%/tick`;
}

function account(v: MarketView): string {
  const pnl = v.equity - v.balance;
  const exposure = Math.round((100 * v.gross) / v.balance);
  return `Cash ${money(v.cash)}. Equity ${money(v.equity)} (PnL ${signed(pnl)}, ${signed((100 * pnl) / v.balance)}%). Gross exposure ${exposure}% of the starting balance.`;
}

export function renderMarket(v: MarketView): string {
  const lines: string[] = [];
  if (v.last) lines.push(`Last tick: ${v.last.action}. Reward parts: pnl ${signed(v.last.pnl, 3)}, risk ${signed(v.last.risk, 3)}.`);
  if (v.tick >= v.horizon) {
    lines.push(`All ${v.horizon} ticks done. ${account(v)}`);
    return lines.join('\n');
  }
  lines.push(`Tick ${v.tick + 1} of ${v.horizon}. ${account(v)}`);
  v.path.names.forEach((name, i) => {
    const outlook = v.showOutlook ? `, ${describeOutlook(v.path, i)}` : '';
    lines.push(`${name} price ${money(v.prices[i])}${outlook}, you hold ${v.positions[i]}`);
  });
  const bounds = v.allowShort ? `between -${v.maxPosition} and ${v.maxPosition}` : `between 0 and ${v.maxPosition}`;
  lines.push(`Trade up to ${v.maxTrade} shares per action; each position must stay ${bounds} shares.`);
  return lines.join('\n');
}

export function renderPriceLookup(path: MarketPath, asset: number, history: readonly number[], showOutlook: boolean): string {
  const name = path.names[asset];
  const now = history[history.length - 1];
  const outlook = showOutlook ? ` Outlook: ${describeOutlook(path, asset)}.` : '';
  return `${name}: ${money(now)} now. Last ${history.length} prices (oldest first): ${history.map(money).join(', ')}.${outlook}`;
}
