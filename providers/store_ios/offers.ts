import { ProviderRejectedError } from '../errors';
import type { CouponSpec } from '../types';
import { attr, one, type ConnectClient, type JsonApiResource } from './connect';
import { PROVIDER } from './errors';
import { subscriptionById } from './catalogue';
import { currentPrices, pricePoints, type PricePoint } from './pricing';

/** Apple offer identifiers: letters, digits, '.', '_' and '-'; our coupon code, cleaned. */
export function offerCodeFor(code: string): string {
  const cleaned = code.trim().replace(/[^A-Za-z0-9._-]/g, '_');
  if (!cleaned) throw new ProviderRejectedError(PROVIDER, 'coupon code is empty');
  return cleaned.slice(0, 64);
}

/**
 * How our coupon becomes a promotional offer. A 100 % coupon is a free period; any other
 * discount is pay-as-you-go at a lower price point for some periods of the subscription's
 * own length: once = 1, repeating = 3, forever = 12 (Apple's maximum for pay-as-you-go).
 */
export function offerShape(coupon: CouponSpec, subscriptionPeriod: string): { offerMode: string; duration: string; numberOfPeriods: number } {
  const free = coupon.percent_off === 100;
  if (free) return { offerMode: 'FREE_TRIAL', duration: coupon.duration === 'forever' ? 'ONE_YEAR' : subscriptionPeriod, numberOfPeriods: 1 };
  const numberOfPeriods = coupon.duration === 'once' ? 1 : coupon.duration === 'repeating' ? 3 : 12;
  return { offerMode: 'PAY_AS_YOU_GO', duration: subscriptionPeriod, numberOfPeriods };
}

function discountedMinor(coupon: CouponSpec, minor: number, currency: string): number | null {
  if (coupon.percent_off != null) return Math.floor((minor * (100 - coupon.percent_off)) / 100);
  if (coupon.amount_off_minor != null) {
    if (!coupon.currency || coupon.currency.toUpperCase() !== currency) return null;
    return minor - coupon.amount_off_minor;
  }
  throw new ProviderRejectedError(PROVIDER, 'coupon has neither percent_off nor amount_off_minor');
}

/** The highest price point at or below the target (Apple sells only at price points). */
function pointAtOrBelow(points: PricePoint[], target: number): PricePoint | undefined {
  let best: PricePoint | undefined;
  for (const p of points) if (p.minor > 0 && p.minor <= target && (!best || p.minor > best.minor)) best = p;
  return best;
}

async function findOffer(c: ConnectClient, subscriptionId: string, offerCode: string): Promise<JsonApiResource | undefined> {
  const { data } = await c.list(`/v1/subscriptions/${subscriptionId}/promotionalOffers`, { limit: 200 });
  return data.find((o) => attr(o, 'offerCode') === offerCode);
}

/**
 * The coupon's counterpart is a promotional offer on the subscription (Apple's offer id is
 * what the app passes to StoreKit). Matched by offerCode first, which is unique per
 * subscription, so a retry finds the offer its first attempt made.
 */
export async function ensurePromotionalOffer(c: ConnectClient, coupon: CouponSpec): Promise<{ kind: string; external_id: string }> {
  const subscriptionId = coupon.product_external_id;
  if (!subscriptionId) throw new ProviderRejectedError(PROVIDER, 'App Store offers belong to a subscription: product_external_id is required');
  const offerCode = offerCodeFor(coupon.code);
  if (await findOffer(c, subscriptionId, offerCode)) return { kind: 'offer_id', external_id: offerCode };

  const sub = await subscriptionById(c, subscriptionId);
  const period = attr(sub, 'subscriptionPeriod') ?? 'ONE_MONTH';
  const shape = offerShape(coupon, period);
  const prices = await currentPrices(c, subscriptionId);
  if (prices.size === 0) throw new ProviderRejectedError(PROVIDER, `subscription ${subscriptionId} has no prices yet; price it before adding offers`);
  const ladders = await pricePoints(c, subscriptionId, [...prices.keys()]);

  const included: Record<string, unknown>[] = [];
  for (const [territory, price] of prices) {
    const ladder = ladders.get(territory);
    if (!ladder) continue;
    let point: PricePoint | undefined = ladder.points.find((p) => p.id === price.pricePointId);
    if (shape.offerMode !== 'FREE_TRIAL' && point) {
      const target = discountedMinor(coupon, point.minor, ladder.currency);
      point = target === null ? undefined : pointAtOrBelow(ladder.points, target);
    }
    if (!point) continue;
    included.push({
      type: 'subscriptionPromotionalOfferPrices',
      id: `\${price-${territory}}`,
      relationships: {
        territory: { data: { type: 'territories', id: territory } },
        subscriptionPricePoint: { data: { type: 'subscriptionPricePoints', id: point.id } },
      },
    });
  }
  if (included.length === 0) throw new ProviderRejectedError(PROVIDER, `no territory of subscription ${subscriptionId} has a price point for this discount`);

  try {
    const doc = await c.post('/v1/subscriptionPromotionalOffers', {
      data: {
        type: 'subscriptionPromotionalOffers',
        attributes: { name: coupon.code.slice(0, 64), offerCode, ...shape },
        relationships: {
          subscription: { data: { type: 'subscriptions', id: subscriptionId } },
          prices: { data: included.map((p) => ({ type: p.type, id: p.id })) },
        },
      },
      included,
    });
    return { kind: 'offer_id', external_id: attr(one(doc), 'offerCode') ?? offerCode };
  } catch (err) {
    if ((err as { status?: number }).status === 409 && (await findOffer(c, subscriptionId, offerCode))) return { kind: 'offer_id', external_id: offerCode };
    throw err;
  }
}
