import crypto from 'node:crypto';
import type Koa from 'koa';
import type { Knex } from 'knex';
import { sessionUser, type SessionUser } from '../../db/dashboard-users';

export const SESSION_COOKIE = 'dash_session';
/** Before login, forms are bound to this random cookie instead of a session. */
export const ANON_COOKIE = 'dash_anon';

declare module 'koa' {
  interface DefaultState {
    user?: SessionUser;
    csrf?: string;
  }
}

/**
 * HttpOnly, SameSite=Lax, Secure when the request came over TLS (X-Forwarded-Proto counts only from TRUSTED_PROXIES:
 * api/client-address.ts).
 */
export function cookieOptions(ctx: Koa.Context, expires?: Date) {
  return {
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: ctx.secure,
    path: '/',
    overwrite: true,
    ...(expires ? { expires } : {}),
  };
}

/**
 * The CSRF token is an HMAC of the cookie's secret value: a cross-site page can neither read
 * the cookie nor compute the token, and nothing extra needs storing.
 */
export function csrfTokenFor(secret: string): string {
  return crypto.createHmac('sha256', secret).update('dashboard-csrf').digest('base64url');
}

export function csrfMatches(secret: string, given: string | null): boolean {
  if (!given) return false;
  const want = Buffer.from(csrfTokenFor(secret));
  const got = Buffer.from(given);
  return want.length === got.length && crypto.timingSafeEqual(want, got);
}

/** The secret this request's forms are bound to: the session token, else the anonymous cookie. */
export function csrfSecret(ctx: Koa.Context): string | undefined {
  return ctx.state.user ? ctx.cookies.get(SESSION_COOKIE) : ctx.cookies.get(ANON_COOKIE);
}

/** Loads the signed-in user (if any) and the CSRF token for this request's forms. */
export function sessionMiddleware(db: Knex): Koa.Middleware {
  return async (ctx, next) => {
    const token = ctx.cookies.get(SESSION_COOKIE);
    if (token && token.length <= 100) {
      const user = await sessionUser(db, token);
      if (user) ctx.state.user = user;
    }
    let secret = csrfSecret(ctx);
    if (!secret) {
      secret = crypto.randomBytes(32).toString('base64url');
      ctx.cookies.set(ANON_COOKIE, secret, cookieOptions(ctx));
    }
    ctx.state.csrf = csrfTokenFor(secret);
    await next();
  };
}
