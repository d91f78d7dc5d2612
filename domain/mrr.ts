import type { TIERS } from './catalogue';

type Tier = (typeof TIERS)[number];

/**
 * Monthly recurring revenue: what one billing period of a tier is worth per month. A weekly
 * price bills 52 times a year, so 52/12 of it per month; a quarterly one a third; an annual one
 * a twelfth. Kept as fractions so sums stay exact until the one rounding at the end.
 */
export const MONTHLY_SHARE: Record<Tier, { num: number; den: number }> = {
  weekly: { num: 52, den: 12 },
  monthly: { num: 1, den: 1 },
  quarterly: { num: 1, den: 3 },
  annual: { num: 1, den: 12 },
};

export interface PricedGroup {
  currency: string;
  tier: Tier;
  /** The sum of one period's price over the group's subscriptions, in minor units. */
  amount_minor: number;
  subscriptions: number;
}

/**
 * MRR per currency, in minor units, rounded once per currency. No conversion between
 * currencies: without a rate source a sum across them would be a made-up number.
 */
export function mrrByCurrency(
  groups: readonly PricedGroup[],
): { currency: string; mrr_minor: number; subscriptions: number }[] {
  const by = new Map<string, { exact: number; subscriptions: number }>();
  for (const g of groups) {
    const share = MONTHLY_SHARE[g.tier];
    const cur = by.get(g.currency) ?? { exact: 0, subscriptions: 0 };
    cur.exact += (g.amount_minor * share.num) / share.den;
    cur.subscriptions += g.subscriptions;
    by.set(g.currency, cur);
  }
  return [...by.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, v]) => ({ currency, mrr_minor: Math.round(v.exact), subscriptions: v.subscriptions }));
}
