import crypto from 'node:crypto';
import type { EmulatorStore } from '../common/types';
import { nowSec, randomToken, rzpId } from './ids';
import type { Stored } from './http';

export type Mode = 'test' | 'live';

/** Who is calling: the connected account and the mode its key (or OAuth token) belongs to. */
export interface Caller {
  account: string;
  mode: Mode;
}

export interface AccountRecord extends Record<string, unknown> {
  account: string;
  credentials: { test: { key_id: string; key_secret: string }; live: { key_id: string; key_secret: string } };
  webhook_secret: string;
  created_at: number;
}

/** Creates the account (or returns the one with that id), as POST /__control/accounts does. */
export function ensureAccount(store: EmulatorStore, id?: string): AccountRecord {
  if (id) {
    const existing = findAccount(store, id);
    if (existing) return existing;
  }
  const rec: AccountRecord = {
    account: id || rzpId('acc'),
    credentials: {
      test: { key_id: `rzp_test_${randomToken(14)}`, key_secret: randomToken(24) },
      live: { key_id: `rzp_live_${randomToken(14)}`, key_secret: randomToken(24) },
    },
    webhook_secret: randomToken(32),
    created_at: nowSec(),
  };
  store.insert('accounts', rec);
  return rec;
}

export function findAccount(store: EmulatorStore, id: string): AccountRecord | undefined {
  return store.find('accounts', (a) => a.account === id) as AccountRecord | undefined;
}

/** The first account created is the default target of /__control/events and /__control/checkout. */
export function defaultAccount(store: EmulatorStore, id?: string): AccountRecord {
  if (id) return findAccount(store, id) ?? ensureAccount(store, id);
  return (store.list('accounts')[0] as AccountRecord | undefined) ?? ensureAccount(store);
}

export function publicAccount(a: AccountRecord) {
  return { account: a.account, credentials: a.credentials, webhook_secret: a.webhook_secret };
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && crypto.timingSafeEqual(ab, bb);
}

/** Objects owned by the caller: a test key never sees live objects, nor another account's. */
export function owned(store: EmulatorStore, kind: string, caller: Caller): Stored[] {
  return store.list(kind).filter((o) => o._account === caller.account && o._mode === caller.mode) as Stored[];
}

export function findOwned(store: EmulatorStore, kind: string, caller: Caller, id: string): Stored | undefined {
  return owned(store, kind, caller).find((o) => o.id === id);
}

/** Insert with owner and a sequence number (so newest-first ordering is stable within one second). */
export function insertOwned<T extends Record<string, unknown>>(
  store: EmulatorStore,
  kind: string,
  caller: Caller,
  obj: T,
): T & Stored {
  const list = store.list(kind);
  const seq = list.reduce((m, o) => Math.max(m, Number(o._seq ?? 0)), 0) + 1;
  return store.insert(kind, { ...obj, _account: caller.account, _mode: caller.mode, _seq: seq });
}
