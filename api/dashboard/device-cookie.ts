import crypto from 'node:crypto';
import type Koa from 'koa';
import type { Vault } from '../../vault/vault';
import { cookieOptions } from './session';

/**
 * The device cookie: what a browser keeps after logging in to an account, so that later log-ins
 * from it are not held back by that account's shared ceiling (domain/login-limits.ts, `account`),
 * which anyone with many addresses can fill.
 *
 * `d1.<key id>.<issued, unix s>.<nonce>.<mac>`, the MAC an HMAC-SHA256 over the key id, the time,
 * the nonce and the SHA-256 of the account's email, under a key derived from MASTER_KEY for this
 * purpose alone (the vault's `deriveKeyring`, as the Temporal payload codec's key is): every
 * replica checks it with no table, it names no account (the email is checked, not carried), it
 * is only good for the account it was issued for, and only the service can make one. A cookie
 * under a key id MASTER_KEY still lists stays good after a rotation; dropping the old key from
 * MASTER_KEY retires the cookies made under it (those browsers count as new ones again).
 *
 * Set at every successful log-in (a fresh nonce, a fresh 180 days), kept over log-out: it says
 * "this browser has logged in here before", not "is logged in". HttpOnly, SameSite=Lax, Secure
 * over TLS, like the session cookie.
 */
export const DEVICE_COOKIE = 'dash_device';
const INFO = 'billing-service dashboard device cookie v1';
const MAX_AGE_S = 180 * 86_400;
/** Clock skew allowed between replicas for an "issued" time in the future. */
const SKEW_S = 300;

export interface DeviceCookies {
  /** A fresh cookie value for the account with this (lower-cased) email. */
  issue(email: string, nowMs?: number): string;
  /** The device's id (its nonce) when `value` is a good cookie for this email, else null. */
  check(value: string | undefined, email: string, nowMs?: number): string | null;
}

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
const mac = (key: Buffer, keyId: string, issued: number, nonce: string, email: string) =>
  crypto
    .createHmac('sha256', key)
    .update(`${keyId}\n${issued}\n${nonce}\n${sha256(email)}`)
    .digest('base64url');

const cache = new WeakMap<Vault, DeviceCookies>();

/** The device cookies of a process with a vault (every api process has one); none without. */
export function deviceCookies(vault: Vault | undefined): DeviceCookies | null {
  if (!vault) return null;
  let d = cache.get(vault);
  if (d) return d;
  const ring = vault.deriveKeyring(INFO);
  d = {
    issue(email, nowMs = Date.now()) {
      const keyId = ring.currentKeyId;
      const issued = Math.floor(nowMs / 1000);
      const nonce = crypto.randomBytes(16).toString('base64url');
      return `d1.${keyId}.${issued}.${nonce}.${mac(ring.keys.get(keyId)!, keyId, issued, nonce, email)}`;
    },
    check(value, email, nowMs = Date.now()) {
      if (!value || value.length > 200) return null;
      const parts = value.split('.');
      if (parts.length !== 5 || parts[0] !== 'd1' || !/^\d{1,12}$/.test(parts[2])) return null;
      const [, keyId, issuedText, nonce, given] = parts;
      const key = ring.keys.get(keyId);
      if (!key) return null;
      const issued = Number(issuedText);
      const now = Math.floor(nowMs / 1000);
      if (issued > now + SKEW_S || now - issued > MAX_AGE_S) return null;
      const want = Buffer.from(mac(key, keyId, issued, nonce, email));
      const got = Buffer.from(given);
      return want.length === got.length && crypto.timingSafeEqual(want, got) ? nonce : null;
    },
  };
  cache.set(vault, d);
  return d;
}

/** Sets the device cookie for `email` on this response (no-op without a vault). */
export function setDeviceCookie(ctx: Koa.Context, cookies: DeviceCookies | null, email: string): void {
  if (!cookies) return;
  ctx.cookies.set(DEVICE_COOKIE, cookies.issue(email), {
    ...cookieOptions(ctx, new Date(Date.now() + MAX_AGE_S * 1000)),
  });
}
