import type { ChartSeries } from './series';

/**
 * The charts a tenant can ask for (docs/charts.md has each definition in words): name, title
 * and description, what `GET /v1/charts`, the tool and the dashboard list. How each is drawn is
 * domain/charts/from-sums.ts, from the sums of facts.ts.
 */
export const CHARTS = [
  { name: 'mrr', title: 'Monthly recurring revenue', description: 'MRR at the end of each period, per currency.' },
  {
    name: 'mrr_movement',
    title: 'MRR movement',
    description:
      'What moved MRR in each period, per currency: new, expansion, contraction, churned, reactivated, and the net.',
  },
  { name: 'arr', title: 'Annual recurring revenue', description: 'MRR × 12 at the end of each period, per currency.' },
  {
    name: 'active_subscriptions',
    title: 'Active subscriptions',
    description: 'Paying subscriptions at the end of each period.',
  },
  { name: 'active_trials', title: 'Active trials', description: 'Subscriptions in a trial at the end of each period.' },
  {
    name: 'trial_conversion',
    title: 'Trial → paid conversion',
    description: 'Trials started in each period and how many of them have paid since (count and rate).',
  },
  {
    name: 'churn_rate',
    title: 'Churn rate',
    description:
      'Subscriptions that stopped paying in each period over those paying at its start; revenue churn (churned and contracted MRR over MRR at its start) per currency.',
  },
  {
    name: 'refund_rate',
    title: 'Refund rate',
    description: 'Refunds in each period over the charges in it.',
  },
  {
    name: 'ltv',
    title: 'Realized LTV per customer cohort',
    description:
      'Customers by the period of their first payment, and the revenue per customer they have brought so far, net of refunds, per currency.',
  },
  {
    name: 'retention',
    title: 'Subscription retention by monthly cohort',
    description:
      'Subscriptions by the month they first paid; for each month after, the share of them that paid in that month.',
  },
  {
    name: 'revenue_by_provider',
    title: 'Revenue by provider',
    description: 'Realized revenue (charges net of refunds) in each period, per provider and currency.',
  },
  {
    name: 'revenue_by_product',
    title: 'Revenue by product',
    description: 'Realized revenue (charges net of refunds) in each period, per product and currency.',
  },
  {
    name: 'revenue_by_country',
    title: 'Revenue by country',
    description: 'Realized revenue (charges net of refunds) in each period, per buyer country and currency.',
  },
] as const;
export type ChartName = (typeof CHARTS)[number]['name'];

export const isChartName = (s: string): s is ChartName => CHARTS.some((c) => c.name === s);

export type { ChartSeries };

export interface CohortRow {
  cohort: string;
  size: number;
  /** Share of the cohort retained in each month since (0 = the cohort's own month); null for months still to come. */
  values: (number | null)[];
}

export interface ChartData {
  periods: string[];
  series: ChartSeries[];
  /** The retention chart's table. */
  cohorts?: CohortRow[];
}
