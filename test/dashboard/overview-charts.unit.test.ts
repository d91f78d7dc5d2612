import { describe, expect, it } from 'vitest';
import { chartSummary, lineChart, niceMax } from '../../api/dashboard/charts/line-chart';
import { barChart } from '../../api/dashboard/charts/bar-chart';
import { windowDays } from '../../api/dashboard/overview-model';
import { mrrByCurrency } from '../../domain/mrr';

/** The server-side SVG charts: what they draw, what they say in text, and that data cannot inject markup. */
describe('overview charts (server-side SVG)', () => {
  const days = windowDays('2026-03-02', 4);

  it('a window of days ends on today, oldest first, across a month end', () => {
    expect(days).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
    expect(windowDays('2026-11-24', 90)).toHaveLength(90);
    expect(windowDays('2026-11-24', 90)[0]).toBe('2026-08-27');
  });

  it('the y axis tops out on a round step above the largest value', () => {
    expect(niceMax(0)).toEqual({ top: 1, step: 1 });
    expect(niceMax(3)).toEqual({ top: 3, step: 1 });
    expect(niceMax(7)).toEqual({ top: 8, step: 2 });
    expect(niceMax(97_312)).toEqual({ top: 100_000, step: 50_000 });
  });

  it('draws one line per series inside the plot, and its table holds every value', () => {
    const out = lineChart({
      id: 'c',
      title: 'New trials',
      days,
      series: [
        { label: 'psp_a', values: [0, 2, 1, 4] },
        { label: 'store_ios', values: [1, 1, 0, 0] },
      ],
    }).value;
    const lines = [...out.matchAll(/<polyline [^>]*points="([^"]+)"/g)].map((m) =>
      m[1].split(' ').map((p) => p.split(',').map(Number)),
    );
    expect(lines).toHaveLength(2);
    for (const pts of lines) {
      expect(pts).toHaveLength(4);
      for (const [x, y] of pts) expect(x >= 0 && x <= 640 && y >= 0 && y <= 320).toBe(true);
    }
    // The highest value sits highest (smallest y), zero on the baseline.
    const a = lines[0];
    expect(Math.min(...a.map((p) => p[1]))).toBe(a[3][1]);
    expect(a[0][1]).toBeGreaterThan(a[1][1]);
    const rows = [...out.matchAll(/<tr><th scope="row">([\d-]+)<\/th><td>(\d+)<\/td><td>(\d+)<\/td><\/tr>/g)].map(
      (m) => [m[1], Number(m[2]), Number(m[3])],
    );
    expect(rows).toEqual([
      ['2026-02-27', 0, 1],
      ['2026-02-28', 2, 1],
      ['2026-03-01', 1, 0],
      ['2026-03-02', 4, 0],
    ]);
    expect(out).toContain('role="img"');
    expect(out).toContain(
      `<desc id="c-desc">${chartSummary({
        id: 'c',
        title: 'New trials',
        days,
        series: [
          { label: 'psp_a', values: [0, 2, 1, 4] },
          { label: 'store_ios', values: [1, 1, 0, 0] },
        ],
      })}</desc>`,
    );
  });

  it('says in words what a screen reader cannot see', () => {
    expect(chartSummary({ id: 'x', title: 'Refunds', days, series: [{ label: 'psp_a', values: [0, 2, 1, 4] }] })).toBe(
      'Refunds, daily from 2026-02-27 to 2026-03-02: psp_a 4 on the last day (lowest 0, highest 4, 7 summed over the days).',
    );
    expect(chartSummary({ id: 'x', title: 'Refunds', days, series: [] })).toBe(
      'Refunds: nothing recorded from 2026-02-27 to 2026-03-02.',
    );
  });

  it('escapes whatever a label carries', () => {
    const out =
      lineChart({ id: 'e', title: 'T', days, series: [{ label: '<script>x</script>', values: [1, 1, 1, 1] }] }).value +
      barChart({ id: 'b', title: 'B', bars: [{ label: '"><img src=x>', value: 1, href: '/x?a=1&b=2' }] }).value;
    expect(out).not.toContain('<script>');
    expect(out).not.toContain('<img');
    expect(out).toContain('&lt;script&gt;');
    expect(out).toContain('href="/x?a=1&amp;b=2"');
  });

  it('bars are as long as their share of the largest, each a link with its value in text', () => {
    const out = barChart({
      id: 'b',
      title: 'Active',
      bars: [
        { label: 'psp_a', value: 5, href: '/s?provider=psp_a' },
        { label: 'psp_b', value: 2, href: '/s?provider=psp_b' },
      ],
    }).value;
    expect([...out.matchAll(/<rect [^>]*width="([\d.]+)"/g)].map((m) => Number(m[1]))).toEqual([100, 40]);
    expect(out).toContain('<span class="bar-value">5</span>');
  });

  it('MRR per currency: each tier brought to a month, never summed across currencies', () => {
    expect(
      mrrByCurrency([
        { currency: 'USD', tier: 'monthly', amount_minor: 999 * 3, subscriptions: 3 },
        { currency: 'USD', tier: 'annual', amount_minor: 12_000, subscriptions: 1 },
        { currency: 'USD', tier: 'weekly', amount_minor: 300, subscriptions: 1 },
        { currency: 'EUR', tier: 'quarterly', amount_minor: 3_000, subscriptions: 1 },
      ]),
    ).toEqual([
      { currency: 'EUR', mrr_minor: 1_000, subscriptions: 1 },
      { currency: 'USD', mrr_minor: 2_997 + 1_000 + 1_300, subscriptions: 5 },
    ]);
  });
});
