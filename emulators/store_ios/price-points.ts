import { currencyOf, exponentOf } from './territories';

/**
 * Each territory sells at a fixed ladder of price points (Apple has ~800 per territory).
 * Ours, in minor units: two-decimal currencies 0.29…9.99 in steps of 0.10, then every
 * n.00 and n.99 up to 999.99 plus n.49 below 100; zero-decimal currencies every 10 up to
 * 10 000, then every 100 up to 200 000. Deterministic, so ids are stable across restarts.
 */
function buildLadder(exponent: number): number[] {
  const s = new Set<number>();
  if (exponent === 0) {
    for (let v = 50; v <= 10_000; v += 10) s.add(v);
    for (let v = 10_100; v <= 200_000; v += 100) s.add(v);
  } else {
    for (let m = 29; m <= 999; m += 10) s.add(m);
    for (let n = 1; n <= 999; n++) {
      s.add(n * 100);
      s.add(n * 100 + 99);
      if (n < 100) s.add(n * 100 + 49);
    }
  }
  return [...s].sort((a, b) => a - b);
}

const LADDERS = new Map<number, number[]>();
export function ladder(exponent: number): number[] {
  let l = LADDERS.get(exponent);
  if (!l) LADDERS.set(exponent, (l = buildLadder(exponent)));
  return l;
}

export interface PricePoint {
  id: string;
  subscriptionId: string;
  territory: string;
  currency: string;
  minor: number;
  customerPrice: string;
  proceeds: string;
}

// Apple's price point ids are base64url JSON naming subscription, territory and point: {"s","t","p"}.
export function pricePointId(subscriptionId: string, territory: string, index: number): string {
  return Buffer.from(JSON.stringify({ s: subscriptionId, t: territory, p: String(10_001 + index) })).toString(
    'base64url',
  );
}

function point(subscriptionId: string, territory: string, currency: string, index: number): PricePoint {
  const exp = exponentOf(currency);
  const minor = ladder(exp)[index];
  const fmt = (m: number) => (m / 10 ** exp).toFixed(exp);
  return {
    id: pricePointId(subscriptionId, territory, index),
    subscriptionId,
    territory,
    currency,
    minor,
    customerPrice: fmt(minor),
    proceeds: fmt(Math.floor(minor * 0.7)),
  };
}

export function pricePointsFor(subscriptionId: string, territory: string): PricePoint[] {
  const currency = currencyOf(territory);
  if (!currency) return [];
  return ladder(exponentOf(currency)).map((_, i) => point(subscriptionId, territory, currency, i));
}

export function decodePricePoint(id: string): PricePoint | undefined {
  try {
    const o = JSON.parse(Buffer.from(id, 'base64url').toString('utf8')) as { s?: unknown; t?: unknown; p?: unknown };
    if (typeof o.s !== 'string' || typeof o.t !== 'string' || typeof o.p !== 'string') return undefined;
    const currency = currencyOf(o.t);
    const index = Number(o.p) - 10_001;
    if (!currency || !Number.isInteger(index) || index < 0 || index >= ladder(exponentOf(currency)).length)
      return undefined;
    return point(o.s, o.t, currency, index);
  } catch {
    return undefined;
  }
}
