import crypto from 'node:crypto';
import type Koa from 'koa';
import { providerKeyMode } from '../../domain/keys';
import type { Mode, ProviderId } from '../../domain/providers';
import { limitOf, SlidingWindow, type CallKind } from '../../domain/rate-limits';

/**
 * Each provider's documented rate limit (domain/rate-limits.ts), enforced by the emulator
 * host when switched on (`POST /__control/rate-limit`, or the `rateLimit` start option): off by
 * default so tests and the demo are not slowed. A request over the limit gets the provider's own
 * 429 (body and retry header) and never reaches the provider API. Counters answer "did the
 * caller stay under the limit?" (`limited` stays 0) and "how close did it come?" (`peak`).
 */
export interface RateLimitSettings {
  enabled: boolean;
  /** Replaces the documented figure for every scope (tests use a low limit to keep runs short). */
  override?: { limit: number; window_ms: number };
}

interface Scope {
  key: string;
  mode: Mode;
  kind: CallKind;
  window: SlidingWindow;
  accepted: number;
  limited: number;
  peak: number;
  first_at: number | null;
  last_at: number | null;
}

const digest = (s: string) => crypto.createHash('sha256').update(s).digest('hex').slice(0, 12);

const bearer = (ctx: Koa.Context) => (ctx.get('authorization') || '').replace(/^Bearer\s+/i, '');

/**
 * Whose allowance a request draws from, as the provider counts it: Stripe per account and
 * mode (the key says which), Paddle per IP (every local caller shares one), Razorpay per key,
 * Google per project and Apple per API key (one caller each here). Apple's Server API counts
 * Get All Subscription Statuses and Get Transaction Info per app and environment, each
 * endpoint on its own allowance (`lookup`, domain/rate-limits.ts LOOKUP_LIMITS). Null: not
 * rate-limited (the OAuth token endpoints belong to another service; the Server API's other
 * endpoints are not modelled).
 */
function scopeOf(
  provider: ProviderId,
  ctx: Koa.Context,
  keyMode?: (ctx: Koa.Context) => Mode | null,
): { key: string; mode: Mode; kind?: CallKind } | null {
  switch (provider) {
    case 'psp_a': {
      const key = bearer(ctx);
      const mode: Mode = providerKeyMode('psp_a', key) === 'live' ? 'live' : 'test';
      return { key: `${mode}:${digest(`${key}|${ctx.get('stripe-account')}`)}`, mode };
    }
    case 'psp_b': {
      const mode: Mode = providerKeyMode('psp_b', bearer(ctx)) === 'live' ? 'live' : 'test';
      return { key: mode, mode };
    }
    case 'psp_c': {
      const auth = ctx.get('authorization') || '';
      const basic = /^Basic\s+(.+)$/i.exec(auth);
      const id = basic ? Buffer.from(basic[1], 'base64').toString('utf8').split(':')[0] : bearer(ctx);
      const mode: Mode = providerKeyMode('psp_c', id) === 'live' ? 'live' : 'test';
      return { key: `${mode}:${digest(id)}`, mode };
    }
    case 'store_android':
      if (ctx.path === '/token' || ctx.path.startsWith('/oauth2/')) return null;
      return { key: 'project', mode: 'live' };
    case 'store_ios': {
      // Get All Subscription Statuses and Get Transaction Info: each endpoint its own allowance.
      const endpoint = /^\/inApps\/v1\/(subscriptions|transactions)\//.exec(ctx.path)?.[1];
      if (endpoint) {
        const mode = keyMode?.(ctx);
        return mode ? { key: `server-api:${mode}:${endpoint}`, mode, kind: 'lookup' } : null;
      }
      if (ctx.path.startsWith('/inApps/')) return null;
      return { key: 'api-key', mode: 'live' };
    }
  }
}

/** The provider's own "too many requests" answer. */
function answer429(provider: ProviderId, ctx: Koa.Context, retryAfterS: number, limit: number, kind: CallKind): void {
  ctx.status = 429;
  ctx.type = 'application/json';
  if (provider === 'store_ios' && kind === 'lookup') {
    // The Server API's RateLimitExceededError; its Retry-After is a UNIX time in ms.
    ctx.set('Retry-After', String(Date.now() + retryAfterS * 1000));
    ctx.body = { errorCode: 4290000, errorMessage: 'Rate limit exceeded.' };
    return;
  }
  switch (provider) {
    case 'psp_a':
      // Stripe names no delay: its libraries back off exponentially; this header says a retry is safe.
      ctx.set('Stripe-Should-Retry', 'true');
      ctx.body = {
        error: {
          code: 'rate_limit',
          doc_url: 'https://stripe.com/docs/error-codes/rate-limit',
          message:
            'Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits.',
          type: 'invalid_request_error',
        },
      };
      return;
    case 'psp_b':
      ctx.set('Retry-After', String(retryAfterS));
      ctx.body = {
        error: {
          type: 'api_error',
          code: 'too_many_requests',
          detail:
            'IP address exceeded the allowed rate limit. Retry after the number of seconds in the Retry-After header.',
          documentation_url: 'https://developer.paddle.com/errors/shared/too_many_requests',
        },
        meta: { request_id: crypto.randomUUID() },
      };
      return;
    case 'psp_c':
      ctx.set('Retry-After', String(retryAfterS));
      ctx.body = {
        error: {
          code: 'BAD_REQUEST_ERROR',
          description: 'Too many requests',
          source: 'NA',
          step: 'NA',
          reason: 'NA',
          metadata: {},
        },
      };
      return;
    case 'store_android': {
      ctx.set('Retry-After', String(retryAfterS));
      const message =
        "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'androidpublisher.googleapis.com'.";
      ctx.body = {
        error: {
          code: 429,
          message,
          errors: [{ message, domain: 'global', reason: 'rateLimitExceeded' }],
          status: 'RESOURCE_EXHAUSTED',
        },
      };
      return;
    }
    case 'store_ios':
      ctx.set('X-Rate-Limit', `user-hour-lim:${limit};user-hour-rem:0;`);
      ctx.body = {
        errors: [
          {
            id: crypto.randomUUID(),
            status: '429',
            code: 'RATE_LIMIT_EXCEEDED',
            title: 'The request rate limit has been reached.',
            detail:
              "We've received too many requests for this API. Please wait and try again or slow down your request rate.",
          },
        ],
      };
  }
}

export function createRateLimiter(
  provider: ProviderId,
  initial: RateLimitSettings = { enabled: false },
  keyMode?: (ctx: Koa.Context) => Mode | null,
) {
  let settings = initial;
  let scopes = new Map<string, Scope>();

  const limitFor = (mode: Mode, kind: CallKind) => {
    const r = limitOf(provider, mode, kind);
    return settings.override ?? { limit: r.limit, window_ms: r.windowMs };
  };

  return {
    configure(next: RateLimitSettings): void {
      settings = next;
      scopes = new Map();
    },

    /** Counters per scope (keys are digests, never a credential). */
    view() {
      const list = [...scopes.values()].map((s) => ({
        key: s.key,
        mode: s.mode,
        kind: s.kind,
        limit: s.window.limit,
        window_ms: s.window.windowMs,
        accepted: s.accepted,
        limited: s.limited,
        peak_in_window: s.peak,
        first_at: s.first_at,
        last_at: s.last_at,
      }));
      return {
        enabled: settings.enabled,
        override: settings.override ?? null,
        accepted: list.reduce((n, s) => n + s.accepted, 0),
        limited: list.reduce((n, s) => n + s.limited, 0),
        scopes: list,
      };
    },

    /** True when the request may go on to the provider API; otherwise the 429 is already set on ctx. */
    admit(ctx: Koa.Context): boolean {
      if (!settings.enabled) return true;
      const who = scopeOf(provider, ctx, keyMode);
      if (!who) return true;
      const kind = who.kind ?? 'default';
      let s = scopes.get(who.key);
      if (!s) {
        const l = limitFor(who.mode, kind);
        s = {
          key: who.key,
          mode: who.mode,
          kind,
          window: new SlidingWindow(l.limit, l.window_ms),
          accepted: 0,
          limited: 0,
          peak: 0,
          first_at: null,
          last_at: null,
        };
        scopes.set(who.key, s);
      }
      const now = Date.now();
      const wait = s.window.take(now);
      if (provider === 'store_ios' && kind === 'default')
        ctx.set(
          'X-Rate-Limit',
          `user-hour-lim:${s.window.limit};user-hour-rem:${Math.max(0, s.window.limit - s.window.inWindow(now))};`,
        );
      if (wait > 0) {
        s.limited++;
        answer429(provider, ctx, Math.max(1, Math.ceil(wait / 1000)), s.window.limit, kind);
        return false;
      }
      s.accepted++;
      s.first_at ??= now;
      s.last_at = now;
      s.peak = Math.max(s.peak, s.window.inWindow(now));
      return true;
    },
  };
}
