import { describe, expect, it } from 'vitest';
import { idempotencyKey } from '../../providers/idempotency';

describe('idempotency keys', () => {
  const base = { tenantId: 't1', provider: 'psp_a', object: 'product', objectId: 'p1', version: 3, step: 'upsert' };
  it('are stable for the same write and differ when any part differs', () => {
    expect(idempotencyKey(base)).toBe(idempotencyKey({ ...base }));
    const variants = [
      { tenantId: 't2' },
      { provider: 'psp_b' },
      { object: 'price' },
      { objectId: 'p2' },
      { version: 4 },
      { step: 'prices' },
    ];
    const keys = new Set([idempotencyKey(base), ...variants.map((v) => idempotencyKey({ ...base, ...v }))]);
    expect(keys.size).toBe(variants.length + 1);
  });
  it('fit every provider’s limit and reveal nothing of their inputs', () => {
    const k = idempotencyKey({ ...base, tenantId: 'a'.repeat(500) });
    expect(k.length).toBeLessThanOrEqual(64);
    expect(k).toMatch(/^bill_[A-Za-z0-9_-]+$/);
    expect(k).not.toContain('psp_a');
  });
});
