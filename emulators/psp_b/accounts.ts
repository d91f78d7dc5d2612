import crypto from 'node:crypto';
import type { EmulatorStore } from '../common/types';
import { paddleKey } from './ids';
import { PaddleError } from './respond';

export type Mode = 'test' | 'live';

/** A connected Paddle seller: one sandbox key, one live key and the notification destination's secret key. */
export interface PaddleAccount extends Record<string, unknown> {
  account: string;
  credentials: { test: { api_key: string }; live: { api_key: string } };
  webhook_secret: string;
  created_at: string;
}

export interface Caller {
  account: string;
  mode: Mode;
}

function newSellerId(store: EmulatorStore): string {
  // Paddle seller ids are numeric; keep them unique within this emulator.
  for (;;) {
    const id = String(100000 + crypto.randomInt(900000));
    if (!findAccount(store, id)) return id;
  }
}

export function findAccount(store: EmulatorStore, id: string): PaddleAccount | undefined {
  return store.find('accounts', (a) => a.account === id) as PaddleAccount | undefined;
}

export function defaultAccount(store: EmulatorStore): PaddleAccount | undefined {
  return store.list('accounts')[0] as PaddleAccount | undefined;
}

/** POST /__control/accounts: create the seller, or return the existing one with that id. */
export function ensureAccount(store: EmulatorStore, id?: string): PaddleAccount {
  if (id) {
    const existing = findAccount(store, id);
    if (existing) return existing;
  }
  return store.insert('accounts', {
    account: id ?? newSellerId(store),
    credentials: {
      // Paddle's current key format names the environment: pdl_sdbx_apikey_… / pdl_live_apikey_….
      test: { api_key: paddleKey('pdl_sdbx_apikey') },
      live: { api_key: paddleKey('pdl_live_apikey') },
    },
    webhook_secret: paddleKey('pdl_ntfset'),
    created_at: new Date().toISOString(),
  } satisfies PaddleAccount);
}

export function accountView(a: PaddleAccount) {
  return { account: a.account, credentials: a.credentials, webhook_secret: a.webhook_secret };
}

function sameSecret(a: string, b: string): boolean {
  const x = crypto.createHash('sha256').update(a).digest();
  const y = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(x, y);
}

/**
 * Bearer API-key auth as Paddle answers it: 403 authentication_missing without a header,
 * 403 authentication_malformed when it is not `Bearer <key>`, 403 invalid_token for a key
 * no seller holds. The key decides both the seller and the environment (sandbox = test).
 */
export function authenticate(store: EmulatorStore, header: string | undefined): Caller {
  if (!header) throw new PaddleError(403, 'authentication_missing', 'Authentication header missing.');
  const m = /^bearer\s+(\S+)$/i.exec(header.trim());
  if (!m)
    throw new PaddleError(
      403,
      'authentication_malformed',
      'Authentication header included, but incorrectly formatted.',
    );
  const key = m[1];
  for (const raw of store.list('accounts')) {
    const a = raw as PaddleAccount;
    if (sameSecret(a.credentials.test.api_key, key)) return { account: a.account, mode: 'test' };
    if (sameSecret(a.credentials.live.api_key, key)) return { account: a.account, mode: 'live' };
  }
  throw new PaddleError(403, 'invalid_token', 'Invalid or revoked API key.');
}
