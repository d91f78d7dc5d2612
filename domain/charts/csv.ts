import type { ChartData } from './chart-list';

/**
 * Text a spreadsheet would run as a formula when it opens the file (OWASP, "CSV Injection"): a cell
 * starting with `=`, `+`, `-` or `@`, or a tab or carriage return before one. Series labels carry
 * what tenants name (a SKU, a country), so such text is written with a leading `'`, which the
 * spreadsheet shows as text. Numbers are never text here: a negative figure stays a number.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One CSV field: text neutralised, then quoted when it holds a separator, a quote or a line break. */
const field = (v: string | number | null) => {
  const s = v === null ? '' : typeof v === 'number' ? String(v) : FORMULA_START.test(v) ? `'${v}` : v;
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
