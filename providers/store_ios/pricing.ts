import { ProviderRejectedError } from '../errors';
import type { ProductSpec } from '../types';
import { attr, relId, type ConnectClient, type JsonApiResource } from './connect';
import { PROVIDER } from './errors';
import { setAvailability } from './catalogue';
import { currencyExponent, territoryFor, toMinor } from './territories';

export interface PricePoint {
  id: string;
  minor: number;
  customerPrice: string;
}

export interface TerritoryPoints {
  currency: string;
  points: PricePoint[];
}

/**
 * The App Store sells only at its own price points, one ladder per territory and currency.
 * One request (filtered to the territories we need, sparse fields, up to 8000 a page) fetches
 * them all; the territory's currency comes from the included territories.
 */
export async function pricePoints(
  c: ConnectClient,
  subscriptionId: string,
  territories: string[],
): Promise<Map<string, TerritoryPoints>> {
  const out = new Map<string, TerritoryPoints>();
  if (territories.length === 0) return out;
  const { data, included } = await c.list(`/v1/subscriptions/${subscriptionId}/pricePoints`, {
    'filter[territory]': territories.join(','),
    include: 'territory',
    'fields[subscriptionPricePoints]': 'customerPrice,territory',
    'fields[territories]': 'currency',
    limit: 8000,
  });
  const currency = new Map(
    included.filter((r) => r.type === 'territories').map((t) => [t.id, attr<string>(t, 'currency') ?? '']),
  );
  for (const p of data) {
    const territory = relId(p, 'territory');
    const price = attr<string>(p, 'customerPrice');
    if (!territory || price === undefined) continue;
    const cur = currency.get(territory) ?? '';
    const entry = out.get(territory) ?? { currency: cur, points: [] };
    out.set(territory, entry);
    entry.points.push({ id: p.id, customerPrice: price, minor: toMinor(price, cur) });
  }
  return out;
}

export interface CurrentPrice {
  id: string;
  territory: string;
  pricePointId: string;
  customerPrice?: string;
}

/** The price in effect today per territory (a subscription may also hold scheduled ones). */
export async function currentPrices(c: ConnectClient, subscriptionId: string): Promise<Map<string, CurrentPrice>> {
  const { data, included } = await c.list(`/v1/subscriptions/${subscriptionId}/prices`, {
    include: 'subscriptionPricePoint,territory',
    limit: 200,
  });
  const pointPrice = new Map(
    included.filter((r) => r.type === 'subscriptionPricePoints').map((p) => [p.id, attr<string>(p, 'customerPrice')]),
  );
  const today = new Date().toISOString().slice(0, 10);
  const best = new Map<string, { start: string; price: CurrentPrice }>();
  for (const p of data) {
    const territory = relId(p, 'territory');
    const pricePointId = relId(p, 'subscriptionPricePoint');
    const start = attr(p, 'startDate') ?? '';
    if (!territory || !pricePointId || start > today) continue;
    const prev = best.get(territory);
    if (!prev || start >= prev.start)
      best.set(territory, {
        start,
        price: { id: p.id, territory, pricePointId, customerPrice: pointPrice.get(pricePointId) },
      });
  }
  return new Map([...best].map(([t, v]) => [t, v.price]));
}

function wantedByTerritory(
  spec: ProductSpec,
): Map<string, { country: string; currency: string; amount_minor: number }> {
  const out = new Map<string, { country: string; currency: string; amount_minor: number }>();
  for (const p of spec.prices) {
    const territory = territoryFor(p.country);
    if (!territory) throw new ProviderRejectedError(PROVIDER, `country ${p.country} is not an App Store territory`);
    const prev = out.get(territory);
    if (prev && (prev.amount_minor !== p.amount_minor || prev.currency !== p.currency)) {
      throw new ProviderRejectedError(
        PROVIDER,
        `two different prices for ${p.country}; the App Store has one price per territory`,
      );
    }
    out.set(territory, p);
  }
  return out;
}

function fmt(minor: number, currency: string): string {
  const exp = currencyExponent(currency);
  return (minor / 10 ** exp).toFixed(exp);
}

export function pointFor(
  territory: string,
  want: { country: string; currency: string; amount_minor: number },
  tp: TerritoryPoints | undefined,
): PricePoint {
  if (!tp || tp.points.length === 0)
    throw new ProviderRejectedError(PROVIDER, `the App Store offers no price points in ${territory}`);
  if (tp.currency !== want.currency.toUpperCase()) {
    throw new ProviderRejectedError(
      PROVIDER,
      `the App Store sells in ${tp.currency} in ${want.country}, not ${want.currency}`,
    );
  }
  const hit = tp.points.find((p) => p.minor === want.amount_minor);
  if (hit) return hit;
  const sorted = [...tp.points].sort(
    (a, b) => Math.abs(a.minor - want.amount_minor) - Math.abs(b.minor - want.amount_minor),
  );
  const near = sorted
    .slice(0, 2)
    .map((p) => p.customerPrice)
    .join(' or ');
  throw new ProviderRejectedError(
    PROVIDER,
    `${fmt(want.amount_minor, tp.currency)} ${tp.currency} is not an App Store price point in ${want.country}; nearest: ${near}`,
  );
}

/**
 * Make the subscription's prices match spec.prices: pick the exact price point per
 * territory, create a subscriptionPrice only where today's price differs (so a retry is a
 * no-op), then make it available in exactly those territories. Existing subscribers keep
 * their current price (preserveCurrentPrice), as the App Store asks for price changes.
 */
export async function upsertSubscriptionPrices(
  c: ConnectClient,
  subscriptionId: string,
  spec: ProductSpec,
): Promise<{ priced_locales: number; price_ids: string[] }> {
  const wanted = wantedByTerritory(spec);
  const territories = [...wanted.keys()];
  const points = await pricePoints(c, subscriptionId, territories);
  const chosen = new Map(territories.map((t) => [t, pointFor(t, wanted.get(t)!, points.get(t))]));
  const current = await currentPrices(c, subscriptionId);
  const priceIds: string[] = [];
  for (const territory of territories) {
    const point = chosen.get(territory)!;
    const now = current.get(territory);
    if (now?.pricePointId === point.id) {
      priceIds.push(now.id);
      continue;
    }
    const doc = await c.post('/v1/subscriptionPrices', {
      data: {
        type: 'subscriptionPrices',
        attributes: { preserveCurrentPrice: Boolean(now) },
        relationships: {
          subscription: { data: { type: 'subscriptions', id: subscriptionId } },
          subscriptionPricePoint: { data: { type: 'subscriptionPricePoints', id: point.id } },
          territory: { data: { type: 'territories', id: territory } },
        },
      },
    });
    priceIds.push((doc.data as JsonApiResource).id);
  }
  if (territories.length > 0) await setAvailability(c, subscriptionId, territories);
  return { priced_locales: territories.length, price_ids: priceIds };
}
