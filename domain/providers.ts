/**
 * The five providers of the spec, their kinds and the two modes. Pure data: imported by
 * runtime, db, providers, api, workflows and activities alike (no cycles through runtime/).
 */
export const PROVIDERS = ['psp_a', 'psp_b', 'psp_c', 'store_android', 'store_ios'] as const;
export type ProviderId = (typeof PROVIDERS)[number];

export const WEB_PROVIDERS = ['psp_a', 'psp_b', 'psp_c'] as const satisfies readonly ProviderId[];
export const STORE_PROVIDERS = ['store_android', 'store_ios'] as const satisfies readonly ProviderId[];
export type WebProviderId = (typeof WEB_PROVIDERS)[number];
export type StoreProviderId = (typeof STORE_PROVIDERS)[number];

export function isProvider(s: unknown): s is ProviderId {
  return typeof s === 'string' && (PROVIDERS as readonly string[]).includes(s);
}

export function isStoreProvider(p: ProviderId): p is StoreProviderId {
  return p === 'store_android' || p === 'store_ios';
}

/** `key_pair`: proven by configuration (credentials); `store`: proven by evidence (a sandbox purchase). */
export type AuthKind = 'key_pair' | 'store';
export const authKindOf = (p: ProviderId): AuthKind => (isStoreProvider(p) ? 'store' : 'key_pair');

export const MODES = ['live', 'test'] as const;
export type Mode = (typeof MODES)[number];

/** Where a sync or drift read acts: one provider connection in one mode (ids only, never a secret). */
export interface SyncTarget {
  provider: ProviderId;
  connectionId: string;
  accountRef: string;
  mode: Mode;
}
