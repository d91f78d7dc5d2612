import type { BillingStorage } from './types.js';

/** A cached service answer and the TTL the service gave it. */
export interface CacheEntry<T> {
  fetchedAt: number;
  ttlSeconds: number;
  value: T;
}

export const DEFAULT_TTL_SECONDS = 604_800; // a week: the spec's default
export const TRIAL_TTL_SECONDS = 3_600; // what the service says during a trial

export function isFresh(entry: CacheEntry<unknown>, now: number): boolean {
  return now < entry.fetchedAt + entry.ttlSeconds * 1000;
}

export function expiresAt(entry: CacheEntry<unknown>): number {
  return entry.fetchedAt + entry.ttlSeconds * 1000;
}

/** Reads and writes JSON entries; a corrupt or foreign value reads as "nothing cached". */
export class JsonCache {
  constructor(private readonly storage: BillingStorage) {}

  async read<T>(key: string): Promise<CacheEntry<T> | null> {
    try {
      const raw = await this.storage.getItem(key);
      if (!raw) return null;
      const e = JSON.parse(raw);
      if (typeof e?.fetchedAt !== 'number' || typeof e?.ttlSeconds !== 'number' || !('value' in e)) return null;
      return e as CacheEntry<T>;
    } catch {
      return null;
    }
  }

  async remove(key: string): Promise<void> {
    try {
      await this.storage.removeItem(key);
    } catch {
      // Unavailable store: the entry ages out by its TTL instead.
    }
  }

  async write<T>(key: string, entry: CacheEntry<T>): Promise<void> {
    try {
      await this.storage.setItem(key, JSON.stringify(entry));
    } catch {
      // A full or unavailable store costs a request next time, never a failure now.
    }
  }
}

/** The service's TTL, or the weekly default when it sent none usable. */
export function ttlFrom(body: { cache_ttl_seconds?: unknown }): number {
  const t = body.cache_ttl_seconds;
  return typeof t === 'number' && Number.isFinite(t) && t > 0 ? t : DEFAULT_TTL_SECONDS;
}
