import type { ChartData } from './chart-list';

/** One CSV field: quoted when it holds a separator, a quote or a line break. */
const field = (v: string | number | null) => {
  const s = v === null ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};
const line = (cells: (string | number | null)[]) => cells.map(field).join(',') + '\r\n';

/**
 * A chart as CSV (RFC 4180): a row per period and a column per series, money in minor units as
 * the JSON answer has it; the retention chart is its cohort table, a row per cohort.
 */
export function chartCsv(chart: ChartData): string {
  if (chart.cohorts) {
    const width = chart.cohorts.reduce((w, c) => Math.max(w, c.values.length), 0);
    return (
      line(['cohort', 'size', ...Array.from({ length: width }, (_, k) => `month ${k}`)]) +
      chart.cohorts.map((c) => line([c.cohort, c.size, ...c.values])).join('')
    );
  }
  return (
    line(['period', ...chart.series.map((s) => s.label)]) +
    chart.periods.map((p, i) => line([p, ...chart.series.map((s) => s.values[i] ?? null)])).join('')
  );
}
