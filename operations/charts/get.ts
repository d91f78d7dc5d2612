import { z } from 'zod';
import { readChartSource } from '../../db/charts';
import { CHARTS, computeChart, isChartName } from '../../domain/charts/definitions';
import { chartCsv } from '../../domain/charts/csv';
import { addMonths, dayOf, MAX_PERIODS, periodsBetween, type Resolution } from '../../domain/charts/periods';
import { invalidRequest, notFound } from '../errors';
import { defineOperation } from '../types';
import { chartAnswer, chartQuery } from './schema';

/** The default window: today and the eleven months (or weeks, or days) before it. */
function defaultFrom(to: string, resolution: Resolution): string {
  const end = Date.parse(`${to}T00:00:00Z`);
  if (resolution === 'month') return dayOf(addMonths(end, -11));
  return dayOf(end - (resolution === 'week' ? 11 * 7 : 29) * 86_400_000);
}

export const getChart = defineOperation({
  name: 'charts.get',
  summary:
    'One chart over time (docs/charts.md): a value per period and series, money per currency in minor units; format=csv for CSV',
  scope: 'charts:read',
  write: false,
  input: z
    .object({ name: z.string().min(1).max(100).describe('the chart, as GET /v1/charts lists it'), ...chartQuery })
    .strict(),
  output: chartAnswer,
  rest: { method: 'GET', path: '/charts/{name}' },
  errors: [404],
  async handler(ctx, input) {
    if (!isChartName(input.name)) throw notFound('chart');
    const chart = CHARTS.find((c) => c.name === input.name)!;
    const resolution = input.resolution ?? 'month';
    const mode = input.mode ?? 'live';
    const filters = {
      provider: input.provider ?? null,
      product: input.product ?? null,
      country: input.country ?? null,
    };
    // The window is checked before anything is read.
    const to = input.to ?? dayOf(Date.now());
    const from = input.from ?? defaultFrom(to, resolution);
    if (from > to) throw invalidRequest(`from (${from}) is after to (${to})`, 'from');
    const periods = periodsBetween(from, to, resolution, MAX_PERIODS[resolution] + 1);
    if (periods.length > MAX_PERIODS[resolution])
      throw invalidRequest(
        `from–to spans more than ${MAX_PERIODS[resolution]} ${resolution}s, the most a chart draws at this resolution`,
        'from',
      );
    const source = await ctx.read((reader) =>
      readChartSource(reader, {
        mode,
        provider: input.provider,
        product: input.product,
        country: input.country,
      }),
    );
    const data = computeChart(chart.name, { ...source, periods, resolution });
    const answer = {
      name: chart.name,
      title: chart.title,
      description: chart.description,
      resolution,
      from,
      to,
      mode,
      filters,
      ...data,
    };
    // CSV is the REST answer's representation (a download); a tool gets the same chart as JSON.
    if (input.format === 'csv') {
      ctx.response.headers['Content-Type'] = 'text/csv; charset=utf-8';
      ctx.response.headers['Content-Disposition'] = `attachment; filename="${chart.name}-${from}-${to}.csv"`;
      ctx.response.text = chartCsv(data);
    }
    return answer;
  },
});
