import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../api/dashboard/session';
import { createSession } from '../../db/dashboard-users';
import { startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeTenant } from '../helpers/factories';

/**
 * The overview's health section counts reconciliation repairs per provider over 24 hours and 7
 * days (docs/reconciliation.md, docs/dashboard.md), links to the Repairs list, and reads only:
 * another tenant's repairs and older ones are not counted, and opening the pages writes nothing.
 */
describe('overview health: repairs from the providers', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let tenantId: string;
  const cookies: Record<string, string> = {};
  const get = async (path: string, role = 'owner') => {
    const r = await fetch(api.dashboardRoot + path, { headers: { cookie: cookies[role] } });
    return { status: r.status, text: await r.text() };
  };
  const repair = (tenant: string, provider: string, hoursAgo: number, appUserId = 'fixed_u') =>
    testDb()('reconciliations').insert({
      tenant_id: tenant,
      run_id: crypto.randomUUID(),
      provider,
      subscription_external_id: `sub_${crypto.randomUUID().slice(0, 8)}`,
      app_user_id: appUserId,
      held: { status: 'active', current_period_end: null },
      provider_state: { status: 'refunded', current_period_end: null, cancel_at: null },
      applied: JSON.stringify([{ id: 'evt_x', kind: 'refunded' }]),
      created_at: testDb().raw(`now() - make_interval(hours => ?)`, [hoursAgo]),
    });
  /** What a page could write: every row count a repair or a read of it could touch. */
  const counts = async () =>
    Object.fromEntries(
      await Promise.all(
        ['reconciliations', 'outbound_events', 'audit_entries', 'subscriptions', 'entitlements'].map(async (t) => [
          t,
          Number((await testDb()(t).where({ tenant_id: tenantId }).count('* as n'))[0].n),
        ]),
      ),
    );

  beforeAll(async () => {
    api = await startApi();
    const t = await makeTenant('overview-repairs');
    tenantId = t.tenant_id;
    for (const role of ['owner', 'viewer']) {
      const [user] = await testDb()('dashboard_users')
        .insert({ tenant_id: tenantId, email: `${role}-${crypto.randomUUID()}@example.com`, role, password_hash: 'x' })
        .returning(['id', 'tenant_id', 'email', 'role']);
      cookies[role] = `${SESSION_COOKIE}=${(await createSession(testDb(), user)).token}`;
    }
    await repair(tenantId, 'psp_a', 1, 'fixed_u1');
    await repair(tenantId, 'psp_a', 5, 'fixed_u2');
    await repair(tenantId, 'psp_b', 72);
    await repair(tenantId, 'psp_a', 240); // older than a week: not counted
    const other = await makeTenant('overview-repairs-other');
    await repair(other.tenant_id, 'psp_a', 1, 'elsewhere_u');
  });
  afterAll(() => api?.close());

  it('counts per provider over 24 hours and 7 days, linked to the list; reading writes nothing', async () => {
    const before = await counts();
    const { status, text } = await get('/overview');
    expect(status).toBe(200);
    expect(text).toContain('Repairs from the providers');
    expect(text).toMatch(
      /<p id="repairs-summary"><a href="\/reconciliations">2 in the last 24 hours, 3 in the last 7 days<\/a>/,
    );
    const rows = [
      ...text.matchAll(
        /<tr><th scope="row"><a href="\/reconciliations\?provider=(\w+)">\w+<\/a><\/th><td>(\d+)<\/td><td>(\d+)<\/td><\/tr>/g,
      ),
    ].map((m) => [m[1], Number(m[2]), Number(m[3])]);
    expect(rows).toEqual([
      ['psp_a', 2, 2],
      ['psp_b', 0, 1],
    ]);
    await get('/reconciliations');
    expect(await counts()).toEqual(before);
  });

  it('the list shows the tenant’s repairs, newest first, filtered by provider; a viewer may read it', async () => {
    const all = await get('/reconciliations', 'viewer');
    expect(all.status).toBe(200);
    expect(all.text).toContain('/customers/fixed_u1');
    expect(all.text).not.toContain('elsewhere_u');
    expect(all.text.indexOf('fixed_u1')).toBeLessThan(all.text.indexOf('fixed_u2'));
    expect((all.text.match(/<tr><td>/g) ?? []).length).toBe(4);
    const b = await get('/reconciliations?provider=psp_b');
    expect((b.text.match(/<tr><td>/g) ?? []).length).toBe(1);
    expect(b.text).toContain('active');
    expect(b.text).toContain('refunded');
    const none = await get('/reconciliations?provider=psp_c');
    expect(none.text).toContain('No repair for psp_c.');
    const bad = await get('/reconciliations?provider=nope');
    expect(bad.status).toBe(400);
  });
});
