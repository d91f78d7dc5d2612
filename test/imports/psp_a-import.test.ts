import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createConnection } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import type { ProviderId } from '../../domain/providers';
import { SCOPES, type Scope } from '../../domain/scopes';
import type { RunningEmulator } from '../../emulators/common/host';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { call, keyWith, newTenant, startApi } from '../helpers/api';
import { sellOnWebProvider } from '../helpers/connections';
import { testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { useEmulatorStack } from '../helpers/emulator-stack';
import { until } from '../helpers/until';
import { confirmedPremium } from '../helpers/premium';
import { closedPort } from '../helpers/closed-port';

describe('import from psp_a (Stripe GET /v1/subscriptions): subscribers the service never heard of', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  // The five emulators, a worker calling them and the listeners, closed after the file.
  const stack = useEmulatorStack();
  let t: Awaited<ReturnType<typeof newTenant>>;
  let account: string;
  let lost: string;
  const users = ['imp_u1', 'imp_u2', 'imp_u3'];

  const control = async (path: string, body: unknown) =>
    (
      await fetch(`${emulators.psp_a.url}/__control${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();
  const sdk = async (user: string) => (await call(api.apiRoot, `/v1/sdk/subscribers/${user}`, t.publishable_key)).body;
  const post = (key: string, body: unknown) =>
    call(api.apiUrl, '/imports', key, { method: 'POST', body: JSON.stringify(body) });
  const get = (key: string, id: string) => call(api.apiUrl, `/imports/${id}`, key);
  const finished = (key: string, id: string) =>
    until(
      'the import finished',
      async () => (await get(key, id)).body,
      (b) => b?.status !== 'running',
      60_000,
    );
  /** What an import could change: every subscription and entitlement row of the tenant, and the status history. */
  const holdings = async (tenantId: string) => ({
    subscriptions: await testDb()('subscriptions')
      .where({ tenant_id: tenantId })
      .orderBy('external_id')
      .select('external_id', 'status', 'app_user_id', 'current_period_end', 'product_id'),
    entitlements: await testDb()('entitlements')
      .where({ tenant_id: tenantId })
      .orderBy('app_user_id')
      .select('app_user_id', 'state', 'expires_at', 'product_id'),
    changes: Number((await testDb()('subscription_changes').where({ tenant_id: tenantId }).count('* as n'))[0].n),
  });

  beforeAll(async () => {
    ({ emulators, worker, api } = stack);
    t = await newTenant('imports-psp-a');
    ({ account } = await sellOnWebProvider({
      provider: 'psp_a',
      emulatorUrl: emulators.psp_a.url,
      vault: worker.vault,
      apiUrl: api.apiUrl,
      tenant: t,
    }));
    // An endpoint that wants every event: it shows whether an import sends outbound events.
    await testDb()('webhook_endpoints').insert({
      tenant_id: t.tenant_id,
      url: 'https://receiver.example.test/hook',
      secret_enc: 'v1:unused',
      task_queue: `nobody-${crypto.randomUUID()}`,
    });
    lost = `http://127.0.0.1:${await closedPort()}/api/webhooks/psp_a`;
    for (const user of users) {
      const c = await control('/checkout', {
        sku: 'pro_monthly',
        email: `${user}@example.com`,
        target: lost,
        account,
        mode: 'test',
        app_user_id: user,
      });
      // Every notification of the purchase went nowhere.
      expect(c.events.every((e: { status: number }) => e.status !== 200)).toBe(true);
    }
  });

  it('the buyers become premium with no webhook; the import says how many it brought in; no outbound event is sent', async () => {
    for (const user of users) expect((await sdk(user)).is_premium).toBe(false);
    const started = await post(t.secret_key, { provider: 'psp_a' });
    expect(started.status).toBe(202);
    expect(started.body).toEqual({ id: expect.any(String), status: 'running' });
    const done = await finished(t.secret_key, started.body.id);
    expect(done).toMatchObject({
      id: started.body.id,
      provider: 'psp_a',
      status: 'succeeded',
      imported: 3,
      refused: [],
    });
    for (const user of users)
      await until(
        `${user} premium`,
        () => sdk(user),
        (b) => confirmedPremium(b),
      );
    const subs = await testDb()('subscriptions').where({ tenant_id: t.tenant_id, provider: 'psp_a' });
    expect(subs.map((s) => [s.app_user_id, s.status]).sort()).toEqual(users.map((u) => [u, 'active']));
    const sent = await testDb()('outbound_events')
      .where({ tenant_id: t.tenant_id })
      .where((q) => q.where('type', 'like', 'entitlement.%').orWhere('type', 'subscription.status_changed'));
    expect(sent).toEqual([]);
  });

  it('re-running the import changes nothing', async () => {
    const before = await holdings(t.tenant_id);
    expect(before.entitlements).toHaveLength(3);
    const again = await post(t.secret_key, { provider: 'psp_a' });
    expect(await finished(t.secret_key, again.body.id)).toMatchObject({ status: 'succeeded', imported: 3 });
    // The customers' workflows saw the same facts again: same ids, dropped as duplicates.
    expect(await holdings(t.tenant_id)).toEqual(before);
  });

  it('an import for a connection that has not proven its account is refused with the reason; none at all too', async () => {
    const other = await newTenant('imports-unproven');
    const acct = await createEmulatorAccount(emulators.psp_a.url);
    expect((await post(other.secret_key, { provider: 'psp_a' })).body).toMatchObject({
      error: 'provider_not_connected',
      param: 'provider',
    });
    await withTenant(testDb(), other.tenant_id, (trx) =>
      createConnection(trx, worker.vault, {
        provider: 'psp_a',
        account_ref: acct.account,
        credentials: acct.credentials,
      }),
    );
    const r = await post(other.secret_key, { provider: 'psp_a' });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ error: 'connection_not_proven', param: 'provider' });
    expect(r.body.detail).toMatch(/proven/);
    expect(await testDb()('imports').where({ tenant_id: other.tenant_id })).toEqual([]);
  });

  it('bad requests are 400 with the field, before anything is written', async () => {
    for (const [body, param] of [
      [{}, 'provider'],
      [{ provider: 'psp_a', csv: 'a,b\n' }, 'csv'],
      [{ provider: 'store_ios' }, 'csv'],
      [{ format: 'revenuecat' }, 'csv'],
      [{ format: 'revenuecat', provider: 'store_ios', csv: 'x' }, 'provider'],
      [{ provider: 'psp_z' }, 'provider'],
    ] as const) {
      const r = await post(t.secret_key, body);
      expect([JSON.stringify(body), r.status, r.body.param]).toEqual([JSON.stringify(body), 400, param]);
    }
  });

  it("another tenant's import is 404, like one that does not exist", async () => {
    const [mine] = await testDb()('imports').where({ tenant_id: t.tenant_id }).limit(1);
    const other = await newTenant('imports-other');
    expect((await get(other.secret_key, mine.id)).status).toBe(404);
    expect((await get(other.secret_key, crypto.randomUUID())).status).toBe(404);
    expect((await get(other.secret_key, 'not-a-uuid')).status).toBe(404);
    expect((await get(t.secret_key, mine.id)).status).toBe(200);
  });

  it('scopes: imports:write starts one, imports:read reads one; neither does the other', async () => {
    const [mine] = await testDb()('imports').where({ tenant_id: t.tenant_id }).limit(1);
    const reader = (await keyWith(t.tenant_id, ['imports:read'])).secret_key;
    const others = (await keyWith(t.tenant_id, SCOPES.filter((s) => !s.startsWith('imports:')) as Scope[])).secret_key;
    expect((await get(reader, mine.id)).status).toBe(200);
    expect((await post(reader, { provider: 'psp_a' })).body).toMatchObject({ error: 'insufficient_scope' });
    expect((await get(others, mine.id)).body).toMatchObject({ error: 'insufficient_scope' });
    expect((await post(others, { provider: 'psp_a' })).body).toMatchObject({ error: 'insufficient_scope' });
  });
});
