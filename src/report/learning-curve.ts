/**
 * A learning curve as a standalone SVG (hand-written: a few polylines, reference lines and axes need
 * no plotting dependency): series of (step, value) points, horizontal reference lines (baselines,
 * the optimum), nice ticks, a legend.
 */

export interface CurveSeries {
  name: string;
  points: { x: number; y: number }[];
  color: string;
  /** Draw each point as a dot too. */
  dots?: boolean;
}

export interface ReferenceLine {
  name: string;
  y: number;
  color: string;
  dashed?: boolean;
}

export interface CurveInput {
  title: string;
  xLabel: string;
  yLabel: string;
  series: CurveSeries[];
  lines: ReferenceLine[];
  width?: number;
  height?: number;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** About `count` round tick values covering [lo, hi]. */
export function niceTicks(lo: number, hi: number, count = 6): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? 10 * magnitude;
  const ticks: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toFixed(10)) + 0); // + 0: no -0
  return ticks;
}

function formatTick(v: number): string {
  if (v === 0) return '0';
  const abs = Math.abs(v);
  if (abs >= 1000) return v.toFixed(0);
  if (abs >= 1) return String(Number(v.toFixed(2)));
  return String(Number(v.toFixed(3)));
}

export function learningCurveSvg(input: CurveInput): string {
  const width = input.width ?? 820;
  const height = input.height ?? 480;
  const margin = { left: 70, right: 210, top: 40, bottom: 50 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const xs = input.series.flatMap((s) => s.points.map((p) => p.x));
  const ys = [...input.series.flatMap((s) => s.points.map((p) => p.y)), ...input.lines.map((l) => l.y)].filter(Number.isFinite);
  const xMin = xs.length ? Math.min(...xs, 0) : 0;
  const xMax = xs.length ? Math.max(...xs, xMin + 1) : 1;
  let yMin = ys.length ? Math.min(...ys) : 0;
  let yMax = ys.length ? Math.max(...ys) : 1;
  if (yMax - yMin < 1e-9) {
    yMin -= 0.5;
    yMax += 0.5;
  }
  const pad = 0.05 * (yMax - yMin);
  yMin -= pad;
  yMax += pad;
  const sx = (x: number) => margin.left + ((x - xMin) / (xMax - xMin)) * plotW;
  const sy = (y: number) => margin.top + (1 - (y - yMin) / (yMax - yMin)) * plotH;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  out.push(`<text x="${margin.left + plotW / 2}" y="22" text-anchor="middle" font-size="15">${escapeXml(input.title)}</text>`);
  // Grid and ticks.
  for (const t of niceTicks(yMin, yMax)) {
    const y = sy(t).toFixed(1);
    out.push(`<line x1="${margin.left}" y1="${y}" x2="${margin.left + plotW}" y2="${y}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${margin.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${formatTick(t)}</text>`);
  }
  for (const t of niceTicks(xMin, xMax)) {
    const x = sx(t).toFixed(1);
    out.push(`<line x1="${x}" y1="${margin.top + plotH}" x2="${x}" y2="${margin.top + plotH + 4}" stroke="#333"/>`);
    out.push(`<text x="${x}" y="${margin.top + plotH + 18}" text-anchor="middle">${formatTick(t)}</text>`);
  }
  out.push(`<rect x="${margin.left}" y="${margin.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${margin.left + plotW / 2}" y="${height - 10}" text-anchor="middle">${escapeXml(input.xLabel)}</text>`);
  out.push(`<text x="16" y="${margin.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${margin.top + plotH / 2})">${escapeXml(input.yLabel)}</text>`);
  // Reference lines, then series on top.
  for (const line of input.lines) {
    if (!Number.isFinite(line.y)) continue;
    const y = sy(line.y).toFixed(1);
    out.push(`<line x1="${margin.left}" y1="${y}" x2="${margin.left + plotW}" y2="${y}" stroke="${line.color}" stroke-width="1.5"${line.dashed === false ? '' : ' stroke-dasharray="6 4"'}/>`);
  }
  for (const s of input.series) {
    const pts = s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
    if (pts.length === 0) continue;
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${pts.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ')}"/>`);
    if (s.dots) for (const p of pts) out.push(`<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="2.5" fill="${s.color}"/>`);
  }
  // Legend.
  const entries = [
    ...input.series.map((s) => ({ name: s.name, color: s.color, dashed: false })),
    ...input.lines.filter((l) => Number.isFinite(l.y)).map((l) => ({ name: `${l.name} (${formatTick(l.y)})`, color: l.color, dashed: l.dashed !== false })),
  ];
  entries.forEach((e, i) => {
    const x = margin.left + plotW + 14;
    const y = margin.top + 10 + i * 20;
    out.push(`<line x1="${x}" y1="${y}" x2="${x + 24}" y2="${y}" stroke="${e.color}" stroke-width="2"${e.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    out.push(`<text x="${x + 30}" y="${y}" dominant-baseline="middle">${escapeXml(e.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
