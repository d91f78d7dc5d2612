import { describe, expect, it } from 'vitest';
import { isProductSynced, isSyncedAt, syncedCounts } from '../../domain/product-sync';

describe('the one "product synced" rule', () => {
  it('at one provider and mode: the object there carries the current version', () => {
    expect(isSyncedAt({ version: 3 }, { synced_version: 3 })).toBe(true);
    expect(isSyncedAt({ version: 3 }, { synced_version: 2 })).toBe(false);
    expect(isSyncedAt({ version: 3 }, undefined)).toBe(false);
    expect(isSyncedAt({ version: 3 }, null)).toBe(false);
  });

  it('as a whole: at least one object, and every object at the current version', () => {
    expect(isProductSynced({ version: 2 }, [])).toBe(false);
    expect(isProductSynced({ version: 2 }, [{ synced_version: 2 }, { synced_version: 2 }])).toBe(true);
    expect(isProductSynced({ version: 2 }, [{ synced_version: 2 }, { synced_version: 1 }])).toBe(false);
  });

  it('readiness counts: distinct products synced per provider and mode, by the same rule', () => {
    const rows = [
      { product_id: 'p1', version: 2, provider: 'psp_a', mode: 'test', synced_version: 2 },
      { product_id: 'p2', version: 1, provider: 'psp_a', mode: 'test', synced_version: 1 },
      { product_id: 'p1', version: 2, provider: 'psp_a', mode: 'live', synced_version: 1 },
      { product_id: 'p1', version: 2, provider: 'store_ios', mode: 'live', synced_version: 2 },
    ];
    const counts = syncedCounts(rows);
    expect(Object.fromEntries(counts)).toEqual({ 'psp_a:test': 2, 'store_ios:live': 1 });
    for (const r of rows) expect(counts.has(`${r.provider}:${r.mode}`) || !isSyncedAt(r, r)).toBe(true);
  });
});
