import type { CanonicalEventKind } from '../domain/events';
import type { EntitlementState } from '../domain/entitlement';
import type { StorePurchaseRead } from '../domain/store-purchase';
import type { LifecycleEvent } from '../domain/subscription';
import { DEMO_PRODUCTS } from './demo-data';

/**
 * A year of the demo tenant's business, generated: a few hundred buyers across the three web
 * providers and the two stores, each with the events a provider would have sent (trials that
 * convert or lapse, renewals, upgrades and downgrades, cancellations, refunds, billing retries
 * that recover or run out). Pure and seeded: the same `seed` and `now` give the same history.
 * `npm start` feeds it through the lifecycle's write path (scripts/demo-history.ts).
 */

/** One web buyer: the provider events of their subscription, oldest first. */
export interface DemoWebBuyer {
  kind: 'web';
  provider: 'psp_a' | 'psp_b' | 'psp_c';
  customerKey: string;
  events: LifecycleEvent[];
}

/** One store buyer: each answer the store would have given, oldest first, with the notification's kind. */
export interface DemoStoreBuyer {
  kind: 'store';
  provider: 'store_android' | 'store_ios';
  appUserId: string;
  reads: { read: StorePurchaseRead; hint: CanonicalEventKind | null }[];
}

export type DemoBuyer = DemoWebBuyer | DemoStoreBuyer;

const DAY = 86_400_000;
const PERIOD_DAYS: Record<string, number> = { weekly: 7, monthly: 30, quarterly: 91, annual: 365 };
/** The chance a period's renewal is the end (cancelled or lapsed), by tier. */
const CHURN: Record<string, number> = { weekly: 0.12, monthly: 0.07, quarterly: 0.1, annual: 0.25 };

/** mulberry32: a small seeded generator, so the history is the same on every machine. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function weighted<T>(rnd: () => number, choices: readonly (readonly [T, number])[]): T {
  const total = choices.reduce((s, [, w]) => s + w, 0);
  let r = rnd() * total;
  for (const [v, w] of choices) if ((r -= w) < 0) return v;
  return choices[choices.length - 1][0];
}

const iso = (ms: number) => new Date(ms).toISOString();
const tierOf = (sku: string) => DEMO_PRODUCTS.find((p) => p.sku === sku)!.tier;

/** How many buyers of each provider (web ones outnumber store ones here, like most web-first businesses). */
const PROVIDERS = [
  ['psp_a', 0.4],
  ['psp_b', 0.2],
  ['psp_c', 0.15],
  ['store_ios', 0.15],
  ['store_android', 0.1],
] as const;
const SKUS = [
  ['premium_monthly', 0.5],
  ['premium_annual', 0.25],
  ['premium_quarterly', 0.15],
  ['premium_weekly', 0.1],
] as const;
const COUNTRIES = [
  ['US', 0.4],
  ['GB', 0.15],
  ['DE', 0.12],
  ['FR', 0.1],
  ['IN', 0.1],
  ['JP', 0.07],
  ['BR', 0.06],
] as const;
const WEB_TRIAL_DAYS: Record<string, number | undefined> = { premium_monthly: 14, premium_annual: 7 };

export function demoHistory(opts: { now: number; buyers?: number; seed?: number }): DemoBuyer[] {
  const rnd = random(opts.seed ?? 20261126);
  const out: DemoBuyer[] = [];
  for (let i = 0; i < (opts.buyers ?? 320); i++) {
    const provider = weighted(rnd, PROVIDERS);
    // More buyers lately than a year ago: a business that grows.
    const start = opts.now - Math.floor(365 * Math.pow(rnd(), 0.8) * DAY) - Math.floor(rnd() * DAY);
    let sku: string = weighted(rnd, SKUS);
    const country: string = weighted(rnd, COUNTRIES);
    // Weekly is not sold in Brazil (seed/demo-data.ts): such a buyer takes the monthly tier.
    if (sku === 'premium_weekly' && country === 'BR') sku = 'premium_monthly';
    const n = String(i + 1).padStart(4, '0');
    if (provider === 'store_ios' || provider === 'store_android')
      out.push(storeBuyer(rnd, provider, n, sku, country, start, opts.now));
    else out.push(webBuyer(rnd, provider, n, sku, country, start, opts.now));
  }
  return out;
}

function webBuyer(
  rnd: () => number,
  provider: DemoWebBuyer['provider'],
  n: string,
  firstSku: string,
  country: string,
  start: number,
  now: number,
): DemoWebBuyer {
  const customer = `cus_demo_${n}`;
  const subscription = `sub_demo_${n}`;
  const app_user_id = `demo_user_${n}`;
  // Razorpay's events name no buyer country; Stripe's and Paddle's addresses do.
  const said = provider === 'psp_c' ? {} : { country };
  const events: LifecycleEvent[] = [];
  let sku = firstSku;
  const add = (kind: CanonicalEventKind, at: number, extra: Partial<LifecycleEvent> = {}) => {
    if (at > now) return false;
    events.push({
      id: `evt_demo_${n}_${events.length + 1}`,
      kind,
      occurred_at: iso(at),
      mode: 'live',
      subscription_id: subscription,
      customer_id: customer,
      app_user_id,
      sku,
      ...said,
      ...extra,
    });
    return true;
  };
  const periodEnd = (from: number) => from + PERIOD_DAYS[tierOf(sku)] * DAY;

  let t = start;
  const trialDays = WEB_TRIAL_DAYS[sku];
  if (trialDays && rnd() < 0.6) {
    const trialEnd = start + trialDays * DAY;
    add('subscription_created', start, {
      trial_start: iso(start),
      trial_end: iso(trialEnd),
      current_period_end: iso(trialEnd),
    });
    if (rnd() >= 0.55) {
      // The trial lapses: cancelled before it ends.
      add('subscription_canceled', trialEnd - DAY, { ended_at: iso(trialEnd - DAY) });
      return { kind: 'web', provider, customerKey: customer, events };
    }
    t = trialEnd;
    if (!add('payment_succeeded', t, { current_period_end: iso(periodEnd(t)) }))
      return { kind: 'web', provider, customerKey: customer, events };
  } else {
    add('subscription_created', t, { current_period_end: iso(periodEnd(t)) });
    add('payment_succeeded', t + 1000, { current_period_end: iso(periodEnd(t)) });
  }
  // A refund a few days after a charge, for a few buyers (the first charge or a later one).
  const refundAfter = rnd() < 0.06 ? Math.floor(rnd() * 3) : -1;
  for (let charge = 0; ; charge++) {
    if (charge === refundAfter) {
      add('refunded', t + (2 + Math.floor(rnd() * 10)) * DAY);
      break;
    }
    const next = periodEnd(t);
    if (next > now) break;
    if (rnd() < CHURN[tierOf(sku)]) {
      add('subscription_canceled', next, { ended_at: iso(next) });
      break;
    }
    if (rnd() < 0.05) {
      // The renewal's payment fails; the provider retries: most recover within days, some run out.
      add('payment_failed', next);
      if (rnd() < 0.7) {
        t = next + 3 * DAY;
        if (!add('renewed', t, { current_period_end: iso(periodEnd(t)) })) break;
        continue;
      }
      add('expired', next + 14 * DAY);
      break;
    }
    t = next;
    // An upgrade to the annual plan, or back down to the monthly one, at a renewal.
    if (sku === 'premium_monthly' && rnd() < 0.06) sku = 'premium_annual';
    else if (sku === 'premium_annual' && rnd() < 0.1) sku = 'premium_monthly';
    if (!add('renewed', t, { current_period_end: iso(periodEnd(t)) })) break;
  }
  return { kind: 'web', provider, customerKey: customer, events };
}

function storeBuyer(
  rnd: () => number,
  provider: DemoStoreBuyer['provider'],
  n: string,
  sku: string,
  country: string,
  start: number,
  now: number,
): DemoStoreBuyer {
  const product = DEMO_PRODUCTS.find((p) => p.sku === sku)!;
  const storeProductId = provider === 'store_ios' ? product.ios_store_product_id : product.android_store_product_id;
  const days = PERIOD_DAYS[product.tier] * DAY;
  const reads: DemoStoreBuyer['reads'] = [];
  const add = (at: number, state: EntitlementState, expires: number, hint: CanonicalEventKind | null) => {
    if (at > now) return false;
    reads.push({
      hint,
      read: {
        provider,
        purchase_key: `demo-${provider === 'store_ios' ? 'ios' : 'play'}-${n}`,
        store_product_id: storeProductId,
        store_app_user: null,
        is_sandbox: false,
        state,
        expires_at: iso(expires),
        acknowledged: true,
        read_at: iso(at),
        country,
      },
    });
    return true;
  };
  let t = start;
  add(t, 'active', t + days, 'subscription_created');
  const refundAfter = rnd() < 0.05 ? Math.floor(rnd() * 2) : -1;
  for (let charge = 0; ; charge++) {
    if (charge === refundAfter) {
      add(t + (1 + Math.floor(rnd() * 7)) * DAY, 'expired', t + days, 'refunded');
      break;
    }
    const next = t + days;
    if (next > now) break;
    if (rnd() < CHURN[product.tier]) {
      add(next, 'expired', next, 'expired');
      break;
    }
    if (rnd() < 0.06) {
      // A billing retry in the store's grace period: most recover, the rest expire when it ends.
      add(next, 'grace_period', next + 16 * DAY, 'grace_period');
      if (rnd() < 0.7) {
        t = next + 2 * DAY;
        if (!add(t, 'active', t + days, 'renewed')) break;
        continue;
      }
      add(next + 16 * DAY, 'expired', next + 16 * DAY, 'expired');
      break;
    }
    t = next;
    if (!add(t, 'active', t + days, 'renewed')) break;
  }
  return { kind: 'store', provider, appUserId: `demo_user_${n}`, reads };
}
