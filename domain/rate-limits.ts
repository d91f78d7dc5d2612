import type { Mode, ProviderId } from './providers';

/**
 * Each provider's documented request rate limit: at most `limit` requests in any `windowMs`.
 * The one place the figures live: the sync paces its calls with them (providers/pacing.ts)
 * and the emulators enforce them when asked (emulators/common/rate-limit.ts).
 *
 * `scope` says whose requests share one allowance at the provider: a connected account's
 * credential (`account`) or every caller behind one IP address (`ip`, Paddle).
 */
export interface RateLimit {
  limit: number;
  windowMs: number;
  scope: 'account' | 'ip';
  /** Where the figure comes from, so a person can check it. */
  source: string;
}

const STRIPE =
  'https://docs.stripe.com/rate-limits (global: 100 requests/s live, 25/s in test mode/sandbox, per account)';
const PADDLE =
  'https://developer.paddle.com/api-reference/about/rate-limiting (240 requests per minute per IP address)';
const RAZORPAY =
  'https://razorpay.com/docs/api/pagination (Razorpay rate-limits but publishes no figure; 10 requests/s is our own conservative assumption, and a 429 is still retried after Retry-After)';
const PLAY = 'https://developers.google.com/android-publisher/quotas (3,000 queries per minute per quota bucket)';
const CONNECT =
  'https://developer.apple.com/documentation/appstoreconnectapi/identifying-rate-limits (3,600 requests per rolling hour per API key, X-Rate-Limit header)';

const SERVER_API =
  'https://developer.apple.com/documentation/appstoreserverapi/identifying-rate-limits (Get All Subscription Statuses: 50 requests/s per app in production, 10 % of that in the sandbox, counted over the hour)';

const same = (r: RateLimit): Record<Mode, RateLimit> => ({ live: r, test: r });

export const RATE_LIMITS: Record<ProviderId, Record<Mode, RateLimit>> = {
  psp_a: {
    live: { limit: 100, windowMs: 1000, scope: 'account', source: STRIPE },
    test: { limit: 25, windowMs: 1000, scope: 'account', source: STRIPE },
  },
  psp_b: same({ limit: 240, windowMs: 60_000, scope: 'ip', source: PADDLE }),
  psp_c: same({ limit: 10, windowMs: 1000, scope: 'account', source: RAZORPAY }),
  store_android: same({ limit: 3000, windowMs: 60_000, scope: 'account', source: PLAY }),
  store_ios: same({ limit: 3600, windowMs: 3_600_000, scope: 'account', source: CONNECT }),
};

export const rateLimitOf = (provider: ProviderId, mode: Mode): RateLimit => RATE_LIMITS[provider][mode];

/**
 * What a store's purchase lookup (an import's line, one call each) draws from, where it is not
 * the allowance above. The App Store's is the Server API's own, per app and environment (the
 * 3,600 an hour above is the App Store Connect API's, for the catalogue): 50 a second in
 * production, 5 in the sandbox, for each of Get All Subscription Statuses and Get Transaction
 * Info; Apple counts it over the hour, so pacing it per second never exceeds it. Play's
 * lookups share its one quota bucket with every other call (RATE_LIMITS).
 */
const LOOKUP_LIMITS: Partial<Record<ProviderId, Record<Mode, RateLimit>>> = {
  store_ios: {
    live: { limit: 50, windowMs: 1000, scope: 'account', source: SERVER_API },
    test: { limit: 5, windowMs: 1000, scope: 'account', source: SERVER_API },
  },
};

/** Which kind of call: a purchase lookup may have an allowance of its own (LOOKUP_LIMITS). */
export type CallKind = 'default' | 'lookup';

export const limitOf = (provider: ProviderId, mode: Mode, kind: CallKind = 'default'): RateLimit =>
  (kind === 'lookup' ? LOOKUP_LIMITS[provider]?.[mode] : undefined) ?? rateLimitOf(provider, mode);

/** The sustained rate a limit allows, in requests per second. */
export const perSecond = (r: Pick<RateLimit, 'limit' | 'windowMs'>): number => (r.limit * 1000) / r.windowMs;

/**
 * Which allowance a call draws from: the provider and mode, plus the account unless the provider
 * limits per IP, plus the endpoint for a lookup with an allowance of its own.
 */
export const rateKey = (
  provider: ProviderId,
  mode: Mode,
  accountRef: string,
  kind: CallKind = 'default',
  endpoint?: string,
): string => {
  // A lookup allowance of its own is per endpoint (the App Store Server API counts each apart).
  const own = kind === 'lookup' && LOOKUP_LIMITS[provider]?.[mode] ? `:lookup:${endpoint ?? ''}` : '';
  const base =
    limitOf(provider, mode, kind).scope === 'ip' ? `${provider}:${mode}` : `${provider}:${mode}:${accountRef}`;
  return base + own;
};

/** A pacing rule: `take(now)` records a call and returns 0, or returns the ms to wait (nothing recorded). */
export interface Pace {
  take(now: number): number;
}

/**
 * How the sync paces calls under a documented limit, with `marginMs` for the few ms by which
 * requests can arrive closer together than they left:
 * - a window of a second or less: the same sliding window, `marginMs` longer (25 a second → at
 *   most 25 in any 1.05 s);
 * - a longer window (240 a minute, 3,600 an hour): a steady rate with a small burst (GCRA).
 *   Bursts of a full window would make later calls wait most of a minute or an hour, longer
 *   than an activity's timeout; a steady rate never does. A burst of B at a rate of
 *   (limit − B − spare) per window can never put more than `limit` in any window; `spare`
 *   absorbs arrival jitter.
 */
export function pacingRule(r: Pick<RateLimit, 'limit' | 'windowMs'>, marginMs = 50): Pace {
  if (r.windowMs <= 1000) return new SlidingWindow(r.limit, r.windowMs + marginMs);
  const burst = Math.max(1, Math.floor(r.limit / 20));
  const spare = Math.max(1, Math.ceil(r.limit / 200));
  return new Gcra(r.windowMs / Math.max(1, r.limit - burst - spare), burst);
}

/**
 * Generic cell rate algorithm: one call every `intervalMs` on average, up to `burst` at once.
 * `tat` is the theoretical arrival time of the next call when the rate is kept.
 */
export class Gcra implements Pace {
  private tat = -Infinity;

  constructor(
    readonly intervalMs: number,
    readonly burst: number,
  ) {}

  take(now: number): number {
    const tat = Math.max(this.tat, now);
    const early = tat - now - (this.burst - 1) * this.intervalMs;
    // Whole ms, at least 1: a fraction of a ms from float rounding must not be a wait of ~0.
    if (early > 1e-6) return Math.max(1, Math.ceil(early));
    this.tat = tat + this.intervalMs;
    return 0;
  }
}

/**
 * How many of one provider's units of work (a product, or a link, in one mode) a sync runs at
 * once: enough to keep the provider's allowance busy when each call takes 50-300 ms (a loaded
 * machine) and a unit makes several calls in sequence, never so many that a low limit only
 * queues them for long. The pacer, not this number, keeps the rate under the limit.
 */
export function syncConcurrency(provider: ProviderId, mode: Mode): number {
  return Math.max(2, Math.min(24, Math.ceil(perSecond(rateLimitOf(provider, mode)) / 3)));
}

/**
 * A sliding-window log: at most `limit` events in any `windowMs`. Pure (the caller passes the
 * time), so the emulators' enforcement and the sync's pacing use one rule. O(1) per event: a
 * ring of the last `limit` event times.
 */
export class SlidingWindow implements Pace {
  private readonly times: number[];
  private next = 0;
  private count = 0;

  /** `windowMs` may be changed later (a pacer widening its margin); the recorded events stay. */
  constructor(
    readonly limit: number,
    public windowMs: number,
  ) {
    if (!(limit >= 1) || !(windowMs > 0)) throw new Error('a rate limit needs limit >= 1 and windowMs > 0');
    this.times = new Array<number>(limit).fill(0);
  }

  /**
   * Take one slot at `now` when the window has room (returns 0, the event is recorded), or
   * return how many ms until it will have (nothing recorded).
   */
  take(now: number): number {
    if (this.count === this.limit) {
      const oldest = this.times[this.next];
      const wait = oldest + this.windowMs - now;
      if (wait > 0) return wait;
    } else {
      this.count++;
    }
    this.times[this.next] = now;
    this.next = (this.next + 1) % this.limit;
    return 0;
  }

  /** Events recorded in the window ending at `now`. */
  inWindow(now: number): number {
    let n = 0;
    for (let i = 0; i < this.count; i++) if (this.times[i] > now - this.windowMs) n++;
    return n;
  }
}
