import { describe, expect, it } from 'vitest';
import { chartCsv } from '../../domain/charts/csv';
import type { ChartData } from '../../domain/charts/chart-list';

const money = (label: string, values: (number | null)[]) => ({
  key: label,
  label,
  unit: 'money' as const,
  currency: 'EUR',
  values,
});

/** The cells of a CSV of simple rows (no quoted separators in these fixtures but the ones named). */
const rows = (csv: string) => csv.trimEnd().split('\r\n');

describe('chart CSV: no cell a spreadsheet would run as a formula (OWASP CSV injection)', () => {
  it('a text cell starting with =, +, -, @, a tab or a carriage return is written with a leading quote', () => {
    // Series labels carry what tenants name (a product's SKU, a country, a currency).
    const labels = ['=HYPERLINK("http://x.example","y") (EUR)', '+1 (EUR)', '-2+3 (EUR)', '@SUM(A1) (EUR)'];
    const chart: ChartData = { periods: ['2026-01'], series: labels.map((l) => money(l, [1])) };
    const [header] = rows(chartCsv(chart));
    expect(header).toBe(`period,"'=HYPERLINK(""http://x.example"",""y"") (EUR)",'+1 (EUR),'-2+3 (EUR),'@SUM(A1) (EUR)`);
    const control: ChartData = { periods: ['\tx', '\rcmd'], series: [money('plain', [1, 2])] };
    expect(chartCsv(control)).toBe(`period,plain\r\n'\tx,1\r\n"'\rcmd",2\r\n`);
    const cohorts: ChartData = {
      periods: [],
      series: [],
      cohorts: [{ cohort: '=1+1', size: 3, values: [1, 0.5] }],
    };
    expect(rows(chartCsv(cohorts))[1]).toBe(`'=1+1,3,1,0.5`);
  });

  it('numbers stay numbers: a negative figure is written as is, so a spreadsheet still adds it up', () => {
    const chart: ChartData = {
      periods: ['2026-01', '2026-02', '2026-03'],
      series: [money('MRR movement (EUR)', [-1500, 0, null]), money('net (EUR)', [-0.25, 2500, -7])],
    };
    expect(rows(chartCsv(chart))).toEqual([
      'period,MRR movement (EUR),net (EUR)',
      '2026-01,-1500,-0.25',
      '2026-02,0,2500',
      '2026-03,,-7',
    ]);
  });

  it('text that only contains those characters later, and ordinary text, is untouched', () => {
    const chart: ChartData = {
      periods: ['2026-W01'],
      series: [money('a=b (EUR)', [1]), money('pro-annual (EUR)', [2])],
    };
    expect(rows(chartCsv(chart))[0]).toBe('period,a=b (EUR),pro-annual (EUR)');
  });
});
