import { z } from 'zod';
import { CHARTS } from '../../domain/charts/chart-list';
import { RESOLUTIONS } from '../../domain/charts/periods';
import { mode, provider } from '../schemas';

export const chartSummary = z.object({ name: z.string(), title: z.string(), description: z.string() });

export const chartList = z.object({ data: z.array(chartSummary) });

export const listedCharts = () => CHARTS.map(({ name, title, description }) => ({ name, title, description }));

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date, YYYY-MM-DD')
  .refine(
    (s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s),
    {
      message: 'must be a real calendar date, YYYY-MM-DD',
    },
  );

export const chartQuery = {
  from: day.optional().describe('first day (UTC), YYYY-MM-DD; default: eleven months before `to`, at that resolution'),
  to: day.optional().describe('last day (UTC), YYYY-MM-DD; default today'),
  resolution: z.enum(RESOLUTIONS).optional().describe('day, week or month (default)'),
  mode: mode.optional().describe('live (default) or test'),
  provider: provider.optional(),
  product: z.string().min(1).max(100).optional().describe('a product id or SKU'),
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code, e.g. DE')
    .optional()
    .describe("the buyer's country"),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 currency code, e.g. EUR')
    .optional()
    .describe('show money converted into this currency with the exchange rates provided (GET /v1/exchange-rates)'),
  format: z.enum(['json', 'csv']).optional().describe('csv answers the same chart as text/csv'),
};

const series = z.object({
  key: z.string(),
  label: z.string(),
  unit: z.enum(['count', 'money', 'ratio']),
  currency: z.string().nullable(),
  values: z.array(z.number().nullable()),
});

export const chartAnswer = z.object({
  name: z.string(),
  title: z.string(),
  description: z.string(),
  resolution: z.enum(RESOLUTIONS),
  from: z.string(),
  to: z.string(),
  mode,
  filters: z.object({
    provider: z.string().nullable(),
    product: z.string().nullable(),
    country: z.string().nullable(),
  }),
  as_of: z.string().describe('what the figures know is exact up to this instant (at most one fold pass behind)'),
  currency: z.string().nullable().describe('the currency money was converted into, or null: each currency apart'),
  unconverted: z
    .array(z.string())
    .optional()
    .describe('with currency: the currencies left as they are, a period having no rate for them'),
  periods: z.array(z.string()),
  series: z.array(series),
  cohorts: z
    .array(z.object({ cohort: z.string(), size: z.number(), values: z.array(z.number().nullable()) }))
    .optional(),
});
