import { html, type SafeHtml } from '../html';

/**
 * A daily line chart as server-side SVG: no script, no library, nothing the CSP has to allow
 * (colours are SVG presentation attributes, not style). It scales with its container
 * (viewBox, width 100 %), so one drawing reads at phone and desktop widths. Each line has a
 * colour and a dash pattern, so lines tell apart without colour too; the figure carries a
 * summary for screen readers and the data table beside it is the text alternative.
 */

export interface Series {
  label: string;
  values: number[];
}

export interface LineChartInput {
  /** Unique on the page: ids of the title, summary and table derive from it. */
  id: string;
  title: string;
  /** One label per point, oldest first (YYYY-MM-DD). */
  days: string[];
  series: Series[];
}

/** Okabe–Ito colours (distinguishable with the common colour-vision deficiencies), each ≥ 3:1 against white. */
const COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#000000'];
const DASHES = ['', '6 3', '2 3', '8 3 2 3', '1 2'];

const W = 640;
const H = 320;
const PAD = { left: 52, right: 16, top: 14, bottom: 36 };

/** A round step for the y axis: 1, 2 or 5 times a power of ten, at most 4 gridlines. */
export function niceMax(max: number): { top: number; step: number } {
  if (max <= 0) return { top: 1, step: 1 };
  const raw = max / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw)!;
  const whole = Math.max(1, Math.ceil(step)); // counts are whole numbers
  return { top: Math.ceil(max / whole) * whole, step: whole };
}

const short = (day: string) => day.slice(5); // MM-DD

/** One sentence a screen reader says for the chart: the latest value and the window's range per line. */
export function chartSummary(c: LineChartInput): string {
  if (c.series.length === 0) return `${c.title}: nothing recorded from ${c.days[0]} to ${c.days.at(-1)}.`;
  const parts = c.series.map((s) => {
    const total = s.values.reduce((a, b) => a + b, 0);
    return `${s.label} ${s.values.at(-1)} on the last day (lowest ${Math.min(...s.values)}, highest ${Math.max(...s.values)}, ${total} summed over the days)`;
  });
  return `${c.title}, daily from ${c.days[0]} to ${c.days.at(-1)}: ${parts.join('; ')}.`;
}

export function lineChart(c: LineChartInput): SafeHtml {
  const n = c.days.length;
  const max = Math.max(0, ...c.series.flatMap((s) => s.values));
  const { top, step } = niceMax(max);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (n <= 1 ? plotW / 2 : (i * plotW) / (n - 1));
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH;
  const fmt = (v: number) => v.toFixed(1);
  const ticks: number[] = [];
  for (let v = 0; v <= top; v += step) ticks.push(v);
  // About six date labels whatever the window: every 5th day of 30, every 15th of 90.
  const every = Math.max(1, Math.ceil(n / 6));
  const xLabels = c.days.map((d, i) => ({ d, i })).filter(({ i }) => (n - 1 - i) % every === 0);
  const summary = chartSummary(c);

  return html`<figure class="chart" aria-labelledby="${c.id}-title">
<figcaption id="${c.id}-title">${c.title}</figcaption>
<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-labelledby="${c.id}-svg-title ${c.id}-desc" focusable="false" xmlns="http://www.w3.org/2000/svg">
<title id="${c.id}-svg-title">${c.title}</title>
<desc id="${c.id}-desc">${summary}</desc>
<g font-size="16" fill="#333">
${ticks.map((v) => html`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${fmt(y(v))}" y2="${fmt(y(v))}" stroke="#d0d0d0" stroke-width="1"/><text x="${PAD.left - 6}" y="${fmt(y(v) + 5)}" text-anchor="end">${v}</text>`)}
${xLabels.map(({ d, i }) => html`<text x="${fmt(x(i))}" y="${H - 10}" text-anchor="${i === n - 1 && n > 1 ? 'end' : 'middle'}">${short(d)}</text>`)}
</g>
${c.series.map((s, k) => {
  const points = s.values.map((v, i) => `${fmt(x(i))},${fmt(y(v))}`).join(' ');
  return html`<polyline fill="none" stroke="${COLOURS[k % COLOURS.length]}" stroke-width="3" stroke-dasharray="${DASHES[k % DASHES.length] || 'none'}" stroke-linejoin="round" points="${points}"/>`;
})}
</svg>
${
  c.series.length > 0
    ? html`<ul class="legend">${c.series.map((s, k) => html`<li><svg width="28" height="10" aria-hidden="true" focusable="false"><line x1="0" x2="28" y1="5" y2="5" stroke="${COLOURS[k % COLOURS.length]}" stroke-width="3" stroke-dasharray="${DASHES[k % DASHES.length] || 'none'}"/></svg> ${s.label}</li>`)}</ul>`
    : html`<p>Nothing recorded in this window.</p>`
}
<details><summary>${c.title}: table</summary>
<div class="scroll" role="region" tabindex="0" aria-label="${c.title}, by day"><table><caption class="skip">${c.title}, by day</caption>
<thead><tr><th scope="col">Day</th>${c.series.map((s) => html`<th scope="col">${s.label}</th>`)}</tr></thead>
<tbody>${c.days.map((d, i) => html`<tr><th scope="row">${d}</th>${c.series.map((s) => html`<td>${s.values[i]}</td>`)}</tr>`)}</tbody></table></div>
</details>
</figure>`;
}
