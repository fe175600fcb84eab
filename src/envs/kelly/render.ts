/** The kelly env's observations, as short text for an LLM. */

export interface KellyView {
  turn: number;
  horizon: number;
  bankroll: number;
  p: number;
  b: number;
  grid: readonly number[];
  last: LastBet | null;
  logGrowth: number;
}

export interface LastBet {
  fraction: number;
  won: boolean;
  before: number;
  after: number;
}

const money = (x: number): string => x.toFixed(2);
const signed = (x: number): string => (x >= 0 ? '+' : '') + x.toFixed(3);

export function describeGrid(grid: readonly number[]): string {
  if (grid.length <= 5) return grid.join(', ');
  return `${grid[0]}, ${grid[1]}, ${grid[2]}, ..., ${grid[grid.length - 1]}`;
}

function describeLast(last: LastBet): string {
  const result = last.won ? 'won' : 'lost';
  return `Last bet: staked ${last.fraction} of ${money(last.before)} and ${result}; bankroll now ${money(last.after)} (log growth ${signed(Math.log(last.after / last.before))}).`;
}

export function renderKelly(v: KellyView): string {
  const lines: string[] = [];
  if (v.last) lines.push(describeLast(v.last));
  if (v.turn >= v.horizon) {
    lines.push(`All ${v.horizon} bets done. Final bankroll ${money(v.bankroll)} (total log growth ${signed(v.logGrowth)}).`);
    return lines.join('\n');
  }
  lines.push(`Bet ${v.turn + 1} of ${v.horizon}. Bankroll ${money(v.bankroll)}.`);
  lines.push(`A bet wins with probability ${v.p} and then pays ${v.b} times the stake; a loss forfeits the stake.`);
  lines.push(`Stake a fraction of your bankroll: one of ${describeGrid(v.grid)}.`);
  return lines.join('\n');
}
