import { describe, expect, it } from 'vitest';
import { EntitlementWaits, WAIT_LIMITS } from '../../api/sdk/entitlement-waits';
import { subscriberHash } from '../../db/entitlement-notify';

/**
 * The waiter registry on its own (no listener, no database): a held check follows its customer's
 * ids once a read has told it them, and a write under one of them notified while that read was
 * under way is not lost (the read may not have seen it).
 */
describe('held checks follow the customer', () => {
  const tenant = '00000000-0000-4000-8000-000000000001';
  const other = '00000000-0000-4000-8000-000000000002';
  const hash = (id: string, t = tenant) => subscriberHash(t, id);
  const quick = () => AbortSignal.timeout(5_000);

  it('wakes on a write under any id the read answered, and only those', async () => {
    const waits = new EntitlementWaits(WAIT_LIMITS);
    const slot = waits.enter(tenant, 'anon', '192.0.2.1');
    slot.reading();
    slot.follow(['user', 'anon', 'anon-2']);
    waits.changed(tenant, hash('someone-else'));
    waits.changed(other, hash('user', other));
    waits.changed(tenant, hash('user'));
    expect(await slot.next(5_000, quick())).toBe('changed');
    waits.changed(tenant, hash('anon-2'));
    expect(await slot.next(5_000, quick())).toBe('changed');
    // Nothing else was pending: the next wait runs to its timeout.
    expect(await slot.next(20, quick())).toBe('timeout');
    slot.leave();
    expect(waits.stats()).toEqual({ waiting: 0, wakeups: 2 });
  });

  it('a write under an id learned by the read, notified while it was under way, counts as a change', async () => {
    const waits = new EntitlementWaits(WAIT_LIMITS);
    const slot = waits.enter(tenant, 'anon', '192.0.2.1');
    slot.reading();
    // Committed after the read's snapshot, notified before the read answered whom to follow.
    waits.changed(tenant, hash('user'));
    slot.follow(['user', 'anon']);
    expect(await slot.next(5_000, quick())).toBe('changed');
    // The same read again, nothing notified meanwhile: nothing pending.
    slot.reading();
    slot.follow(['user', 'anon']);
    expect(await slot.next(20, quick())).toBe('timeout');
    slot.leave();
  });

  it('leaving frees every key the waiter followed; the per-user bound counts the id asked about', async () => {
    const waits = new EntitlementWaits({ ...WAIT_LIMITS, perUser: 1 });
    const a = waits.enter(tenant, 'anon', '192.0.2.1');
    a.reading();
    a.follow(['user', 'anon']);
    // Another id of the same customer is another app user's slot.
    const b = waits.enter(tenant, 'user', '192.0.2.1');
    expect(() => waits.enter(tenant, 'anon', '192.0.2.1')).toThrow(/concurrent waits per app user/);
    a.leave();
    b.leave();
    waits.changed(tenant, hash('user'));
    expect(waits.stats()).toEqual({ waiting: 0, wakeups: 0 });
  });
});
