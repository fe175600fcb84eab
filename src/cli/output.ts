/** Human output goes to stdout as text; with --json, one JSON object is the last line of stdout. */

export interface Output {
  json: boolean;
  /** A human-readable line (suppressed with --json). */
  line(text?: string): void;
  /** The command's result: printed as one JSON line with --json. */
  result(value: unknown): void;
}

export function makeOutput(json: boolean): Output {
  return {
    json,
    line(text = '') {
      if (!json) process.stdout.write(`${text}\n`);
    },
    result(value) {
      if (json) process.stdout.write(`${JSON.stringify(value)}\n`);
    },
  };
}

export function fmt(x: number | null | undefined, digits = 4): string {
  if (x === null || x === undefined || Number.isNaN(x)) return 'n/a';
  return x.toFixed(digits);
}

export function pct(x: number | null | undefined): string {
  if (x === null || x === undefined || Number.isNaN(x)) return 'n/a';
  return `${(100 * x).toFixed(1)}%`;
}

/** Renders rows as an aligned text table. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const render = (r: string[]) => r.map((c, i) => (c ?? '').padEnd(widths[i])).join('  ').trimEnd();
  return [render(header), render(widths.map((w) => '-'.repeat(w))), ...rows.map(render)].join('\n');
}
