import { html, type SafeHtml } from '../html';

/**
 * Horizontal bars as server-side SVG, one per label, each bar a link to the records it counts.
 * The bars sit in a list (label, bar, value as text), so the value is read out as text and
 * the drawing is decoration: the list is the text alternative.
 */
export interface BarChartInput {
  id: string;
  title: string;
  bars: { label: string; value: number; href: string }[];
}

export function barChart(c: BarChartInput): SafeHtml {
  // No axis to read, so the longest bar spans the width; the values are the text beside them.
  const top = Math.max(1, ...c.bars.map((b) => b.value));
  return html`<figure class="chart" aria-labelledby="${c.id}-title">
<figcaption id="${c.id}-title">${c.title}</figcaption>
<ul class="bars">${c.bars.map(
    (b) => html`<li><a href="${b.href}"><span class="bar-label">${b.label}</span>
<svg viewBox="0 0 100 10" preserveAspectRatio="none" width="100%" height="14" aria-hidden="true" focusable="false"><rect x="0" y="0" height="10" width="${((b.value / top) * 100).toFixed(2)}" fill="#0072B2"/></svg>
<span class="bar-value">${b.value}</span></a></li>`,
  )}</ul>
</figure>`;
}
