import { z } from 'zod';
import { readCatalogue, readFiledHistories } from '../../db/charts';
import { readChartSums, readSumsState, resolveProduct, type SumsNeeded } from '../../db/chart-sums';
import { readRates } from '../../db/exchange-rates';
import { CHARTS, isChartName, type ChartName } from '../../domain/charts/chart-list';
import { customerFacts, subscriptionFacts, type CustomerSubscription } from '../../domain/charts/facts';
import { CHART_MEASURES, chartFromSums, dayCompaction } from '../../domain/charts/from-sums';
import { sumFacts, type Split } from '../../domain/charts/sum-facts';
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

const SPLITS: Partial<Record<ChartName, Split>> = {
  revenue_by_provider: 'provider',
  revenue_by_product: 'product',
  revenue_by_country: 'country',
};
const NEEDS: Partial<Record<ChartName, SumsNeeded>> = { ltv: 'ltv', retention: 'retention' };
/** A product filter naming no product: matches no sum. */
const NO_PRODUCT = '-';

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
  fuzzModelled: false,
  errors: [404],
  tool: {
    name: 'billing_chart',
    title: 'Chart',
    description: `One business chart over time, e.g. "what was MRR last quarter": name (${CHARTS.map((c) => c.name).join(', ')}), from/to (YYYY-MM-DD), resolution (day, week, month), mode, provider, product, country. Money is per currency in minor units; never add two currencies.`,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
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
    const split = SPLITS[chart.name] ?? null;
    const sums = await ctx.read(async (reader) => {
      const state = await readSumsState(reader);
      const catalogue = await readCatalogue(reader);
      const product = input.product ? ((await resolveProduct(reader, input.product)) ?? NO_PRODUCT) : undefined;
      const filter = { mode, provider: input.provider, product, country: input.country };
      const rates = input.currency ? await readRates(reader, input.currency) : undefined;
      // The sums the worker's fold job keeps; a tenant it has not built yet is added up here from its histories.
      const read = state.built
        ? await readChartSums(
            reader,
            filter,
            NEEDS[chart.name] ?? 'days',
            split,
            catalogue,
            chart.name === 'ltv' || chart.name === 'retention' ? [] : CHART_MEASURES[chart.name],
            dayCompaction(periods, state.asOf),
          )
        : sumsFromHistories(
            await readFiledHistories(reader, { ...filter, product: input.product }),
            filter,
            split,
            catalogue,
            state.asOf,
          );
      return { ...read, asOf: state.asOf, rates };
    });
    const { unconverted, ...data } = chartFromSums(chart.name, {
      ...sums,
      periods,
      resolution,
      now: sums.asOf,
      convert: input.currency ? { to: input.currency, rates: sums.rates ?? [] } : undefined,
    });
    const answer = {
      name: chart.name,
      title: chart.title,
      description: chart.description,
      resolution,
      from,
      to,
      mode,
      filters,
      as_of: new Date(sums.asOf).toISOString(),
      currency: input.currency ?? null,
      ...(unconverted ? { unconverted } : {}),
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

/** The sums of a tenant the fold job has not built yet, added up in the process (domain/charts/sum-facts.ts). */
function sumsFromHistories(
  histories: Awaited<ReturnType<typeof readFiledHistories>>,
  filter: Parameters<typeof sumFacts>[2],
  split: Split,
  catalogue: Parameters<typeof sumFacts>[4],
  now: number,
) {
  const filed = histories.map((f) => ({
    mode: f.mode,
    provider: f.provider,
    product: f.product ?? '',
    country: f.country ?? '',
    history: f.history,
    facts: subscriptionFacts(f.history, catalogue, now),
  }));
  const customers = new Map<string, CustomerSubscription[]>();
  for (const f of filed) customers.set(f.history.customer, [...(customers.get(f.history.customer) ?? []), f]);
  const ltv = [...customers.values()].flatMap((subs) => customerFacts(subs, catalogue, now));
  return sumFacts(filed, ltv, filter, split, catalogue);
}
