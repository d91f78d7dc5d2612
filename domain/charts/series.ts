/**
 * What a chart's series are (keys, labels, units, the rates and their rounding), once: the
 * service draws them from the fold's sums (from-sums.ts), the tests' reference from every
 * history (test/helpers/chart-reference.ts). Each takes per-period figures however they were
 * counted; `future(i)`: period i is still to come, so its value is null.
 */
export type Unit = 'count' | 'money' | 'ratio';

export interface ChartSeries {
  key: string;
  label: string;
  unit: Unit;
  /** Set on money series (minor units of it); never two currencies in one series. */
  currency: string | null;
  /** One per period; null where the figure is not defined (a rate over nothing, a period still to come). */
  values: (number | null)[];
}

type Future = (i: number) => boolean;
type Figures = readonly (number | null)[] | undefined;

/** A ratio to four decimals; null where nothing was there to divide by. */
export const ratio = (num: number, den: number) => (den > 0 ? Math.round((num / den) * 10_000) / 10_000 : null);

const at = (xs: Figures, i: number) => xs?.[i] ?? 0;
const each = (n: number, future: Future, value: (i: number) => number | null) =>
  Array.from({ length: n }, (_, i) => (future(i) ? null : value(i)));

export function trialConversionSeries(n: number, future: Future, trials: Figures, converted: Figures): ChartSeries[] {
  return [
    {
      key: 'trials',
      label: 'Trials started',
      unit: 'count',
      currency: null,
      values: each(n, future, (i) => at(trials, i)),
    },
    {
      key: 'converted',
      label: 'Converted to paid',
      unit: 'count',
      currency: null,
      values: each(n, future, (i) => at(converted, i)),
    },
    {
      key: 'rate',
      label: 'Conversion rate',
      unit: 'ratio',
      currency: null,
      values: each(n, future, (i) => ratio(at(converted, i), at(trials, i))),
    },
  ];
}

export function refundRateSeries(n: number, future: Future, refunds: Figures, charges: Figures): ChartSeries[] {
  return [
    { key: 'refunds', label: 'Refunds', unit: 'count', currency: null, values: each(n, future, (i) => at(refunds, i)) },
    { key: 'charges', label: 'Charges', unit: 'count', currency: null, values: each(n, future, (i) => at(charges, i)) },
    {
      key: 'rate',
      label: 'Refund rate',
      unit: 'ratio',
      currency: null,
      values: each(n, future, (i) => ratio(at(refunds, i), at(charges, i))),
    },
  ];
}

/** Subscriptions churned in a period over those paying at its start. */
export const subscriptionChurnSeries = (
  n: number,
  future: Future,
  churned: Figures,
  payingAtStart: Figures,
): ChartSeries => ({
  key: 'subscriptions',
  label: 'Subscription churn rate',
  unit: 'ratio',
  currency: null,
  values: each(n, future, (i) => ratio(at(churned, i), at(payingAtStart, i))),
});

/** MRR lost in a period (churned and contracted) over the MRR at its start, in one currency. */
export const revenueChurnSeries = (
  n: number,
  future: Future,
  currency: string,
  lost: Figures,
  mrrAtStart: Figures,
): ChartSeries => ({
  key: `revenue:${currency}`,
  label: `Revenue churn rate (${currency})`,
  unit: 'ratio',
  currency,
  values: each(n, future, (i) => ratio(at(lost, i), at(mrrAtStart, i))),
});

/** The customers of each period's cohort. */
export const cohortCustomersSeries = (n: number, future: Future, size: Figures): ChartSeries => ({
  key: 'customers',
  label: 'Customers',
  unit: 'count',
  currency: null,
  values: each(n, future, (i) => at(size, i)),
});

/** A cohort's revenue so far per customer, in one currency. */
export const revenuePerCustomerSeries = (
  n: number,
  future: Future,
  currency: string,
  size: Figures,
  revenue: Figures,
): ChartSeries => ({
  key: `ltv:${currency}`,
  label: `Revenue per customer (${currency})`,
  unit: 'money',
  currency,
  values: each(n, future, (i) => (at(size, i) === 0 ? null : Math.round(at(revenue, i) / at(size, i)))),
});
