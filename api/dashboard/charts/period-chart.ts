import { html, type SafeHtml } from '../html';

/**
 * A chart over periods as server-side SVG, like line-chart.ts (no script, Okabe–Ito colours and a
 * dash pattern per line, so lines tell apart without colour; a title and a summary for screen
 * readers), for the charts of docs/charts.md: values may be negative (MRR movement) or missing
 * (a period to come, a rate over nothing: the line breaks there). The table under it is the
 * text alternative and holds every figure.
 */
export interface PeriodSeries {
  label: string;
  values: (number | null)[];
}

export interface PeriodChartInput {
  id: string;
  title: string;
  periods: string[];
  series: PeriodSeries[];
  /** How a value reads (axis, summary and table): a count, money in one currency, a share. */
  format: (v: number) => string;
}

const COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#000000', '#E69F00', '#56B4E9'];
const DASHES = ['', '6 3', '2 3', '8 3 2 3', '1 2', '10 4', '4 2 1 2'];
const W = 640;
const H = 320;
const PAD = { left: 84, right: 16, top: 14, bottom: 36 };

/** A round step (1, 2 or 5 times a power of ten) covering [min, max] in about four gridlines. */
function scale(min: number, max: number): { lo: number; hi: number; step: number } {
  const span = max - min || Math.abs(max) || 1;
  const raw = span / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw)!;
  return { lo: Math.floor(min / step) * step, hi: Math.ceil(max / step) * step || step, step };
}

function summary(c: PeriodChartInput): string {
  if (c.series.length === 0) return `${c.title}: nothing recorded from ${c.periods[0]} to ${c.periods.at(-1)}.`;
  const parts = c.series.map((s) => {
    const known = s.values.filter((v): v is number => v !== null);
    if (known.length === 0) return `${s.label}: no value`;
    return `${s.label} ${c.format(known.at(-1)!)} in the last period with a value (lowest ${c.format(Math.min(...known))}, highest ${c.format(Math.max(...known))})`;
  });
  return `${c.title}, from ${c.periods[0]} to ${c.periods.at(-1)}: ${parts.join('; ')}.`;
}

export function periodChart(c: PeriodChartInput): SafeHtml {
  const n = c.periods.length;
  const known = c.series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const { lo, hi, step } = scale(Math.min(0, ...known), Math.max(0, ...known));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (n <= 1 ? plotW / 2 : (i * plotW) / (n - 1));
  const y = (v: number) => PAD.top + plotH - ((v - lo) / (hi - lo)) * plotH;
  const f = (v: number) => v.toFixed(1);
  const ticks: number[] = [];
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push(v);
  const every = Math.max(1, Math.ceil(n / 6));
  const xLabels = c.periods.map((d, i) => ({ d, i })).filter(({ i }) => (n - 1 - i) % every === 0);
  // A line is drawn through runs of known values; a missing value breaks it.
  const runs = (values: (number | null)[]) => {
    const out: string[] = [];
    let cur: string[] = [];
    values.forEach((v, i) => {
      if (v === null) {
        if (cur.length) out.push(cur.join(' '));
        cur = [];
      } else cur.push(`${f(x(i))},${f(y(v))}`);
    });
    if (cur.length) out.push(cur.join(' '));
    return out;
  };
  return html`<figure class="chart" aria-labelledby="${c.id}-title">
<figcaption id="${c.id}-title">${c.title}</figcaption>
<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-labelledby="${c.id}-svg-title ${c.id}-desc" focusable="false" xmlns="http://www.w3.org/2000/svg">
<title id="${c.id}-svg-title">${c.title}</title>
<desc id="${c.id}-desc">${summary(c)}</desc>
<g font-size="14" fill="#333">
${ticks.map((v) => html`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${f(y(v))}" y2="${f(y(v))}" stroke="${v === 0 ? '#666' : '#d0d0d0'}" stroke-width="1"/><text x="${PAD.left - 6}" y="${f(y(v) + 5)}" text-anchor="end">${c.format(v)}</text>`)}
${xLabels.map(({ d, i }) => html`<text x="${f(x(i))}" y="${H - 10}" text-anchor="${i === n - 1 && n > 1 ? 'end' : 'middle'}">${d}</text>`)}
</g>
${c.series.map((s, k) =>
  runs(s.values).map((points) =>
    points.includes(' ')
      ? html`<polyline fill="none" stroke="${COLOURS[k % COLOURS.length]}" stroke-width="3" stroke-dasharray="${DASHES[k % DASHES.length] || 'none'}" stroke-linejoin="round" points="${points}"/>`
      : html`<circle cx="${points.split(',')[0]}" cy="${points.split(',')[1]}" r="4" fill="${COLOURS[k % COLOURS.length]}"/>`,
  ),
)}
</svg>
${
  c.series.length > 0
    ? html`<ul class="legend">${c.series.map((s, k) => html`<li><svg width="28" height="10" aria-hidden="true" focusable="false"><line x1="0" x2="28" y1="5" y2="5" stroke="${COLOURS[k % COLOURS.length]}" stroke-width="3" stroke-dasharray="${DASHES[k % DASHES.length] || 'none'}"/></svg> ${s.label}</li>`)}</ul>`
    : html`<p>Nothing recorded in this window.</p>`
}
<div class="scroll" role="region" tabindex="0" aria-label="${c.title}, table"><table><caption>${c.title}, by period</caption>
<thead><tr><th scope="col">Period</th>${c.series.map((s) => html`<th scope="col">${s.label}</th>`)}</tr></thead>
<tbody>${c.periods.map((d, i) => html`<tr><th scope="row">${d}</th>${c.series.map((s) => html`<td>${s.values[i] === null ? '—' : c.format(s.values[i]!)}</td>`)}</tr>`)}</tbody></table></div>
</figure>`;
}
