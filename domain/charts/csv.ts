import type { ChartData } from './chart-list';
import { csvLine as line } from '../csv';

/**
 * A chart as CSV (RFC 4180, every cell safe in a spreadsheet: ../csv.ts): a row per period and a
 * column per series, money in minor units as the JSON answer has it; the retention chart is its
 * cohort table, a row per cohort.
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
