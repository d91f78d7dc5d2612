import type { BillingStorage, Platform } from './types.js';

export class MemoryStorage implements BillingStorage {
  private readonly items = new Map<string, string>();
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
}

/** `localStorage` on the web (the answer survives reloads), memory elsewhere. */
export function defaultStorage(platform: Platform): BillingStorage {
  if (platform === 'web') {
    try {
      const ls = (globalThis as { localStorage?: BillingStorage }).localStorage;
      if (ls) return ls;
    } catch {
      // Access to localStorage throws in some sandboxed frames: fall back to memory.
    }
  }
  return new MemoryStorage();
}
