import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ProviderId } from '../../domain/providers';
import { SCOPES, type Scope } from '../../domain/scopes';
import type { RunningEmulator } from '../../emulators/common/host';
import { startConnectionProof } from '../../temporal/workflow-starts';
import { call, keyWith, newTenant, startApi } from '../helpers/api';
import { sellOnWebProvider } from '../helpers/connections';
import { testDb } from '../helpers/db';
import { useEmulatorStack } from '../helpers/emulator-stack';
import type { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { closedPort } from '../helpers/closed-port';

/**
 * Issue #29, "When a connection is proven": proving a psp_a connection whose account already
 * holds subscriptions brings them in by itself (no webhook, no import call), once per connection,
 * and the import is listed with its trigger.
 */
describe('import on proof: a proven web account brings its existing subscribers in', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  const stack = useEmulatorStack();
  let t: Awaited<ReturnType<typeof newTenant>>;
  let connectionId: string;
  const users = ['proof_u1', 'proof_u2'];

  const sdk = async (user: string) => (await call(api.apiRoot, `/v1/sdk/subscribers/${user}`, t.publishable_key)).body;
  const list = (key: string, query = '') => call(api.apiUrl, `/imports${query}`, key);
  const prove = async () => {
    const h = await startConnectionProof(
      worker.client,
      worker.taskQueue,
      t.tenant_id,
      connectionId,
      crypto.randomUUID(),
    );
    await h.result();
  };

  beforeAll(async () => {
    ({ emulators, worker, api } = stack);
    t = await newTenant('import-on-proof');
    const { account } = await sellOnWebProvider({
      provider: 'psp_a',
      emulatorUrl: emulators.psp_a.url,
      vault: worker.vault,
      apiUrl: api.apiUrl,
      tenant: t,
    });
    const lost = `http://127.0.0.1:${await closedPort()}/api/webhooks/psp_a`;
    for (const user of users) {
      const r = await fetch(`${emulators.psp_a.url}/__control/checkout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          sku: 'pro_monthly',
          email: `${user}@example.com`,
          target: lost,
          account,
          mode: 'test',
          app_user_id: user,
        }),
      });
      expect(r.ok).toBe(true);
    }
    // The connection as a newcomer's is before Verify: connected, not yet proven (the fixture proves it directly).
    const [c] = await testDb()('provider_connections')
      .where({ tenant_id: t.tenant_id, provider: 'psp_a' })
      .update({ verified_at: null, verified_by: null })
      .returning('id');
    connectionId = c.id;
  });

  it('proving the connection makes the buyers premium, with no webhook and no import call; the import says connection_proven', async () => {
    for (const user of users) expect((await sdk(user)).is_premium).toBe(false);
    expect(await testDb()('imports').where({ tenant_id: t.tenant_id })).toEqual([]);
    await prove();
    for (const user of users)
      await until(
        `${user} premium`,
        () => sdk(user),
        (b) => b.is_premium === true,
        60_000,
      );
    const done = await until(
      'the import on proof finished',
      async () => (await list(t.secret_key)).body,
      (b) => b?.data?.[0]?.status === 'succeeded',
      60_000,
    );
    expect(done.data).toEqual([
      expect.objectContaining({
        provider: 'psp_a',
        trigger: 'connection_proven',
        status: 'succeeded',
        imported: 2,
        refused_count: 0,
      }),
    ]);
    const one = await call(api.apiUrl, `/imports/${done.data[0].id}`, t.secret_key);
    expect(one.body).toMatchObject({ trigger: 'connection_proven', imported: 2, refused: [] });
    expect((await list(t.secret_key, '?trigger=request')).body.data).toEqual([]);
    // No webhook reached the service.
    expect(await testDb()('webhook_deliveries').where({ tenant_id: t.tenant_id })).toEqual([]);
  });

  it('proving it again (Verify once more) does not import the account again', async () => {
    await prove();
    const rows = await testDb()('imports').where({ tenant_id: t.tenant_id });
    expect(rows.map((r) => r.trigger)).toEqual(['connection_proven']);
  });

  it('the list is the tenant’s own, and needs imports:read', async () => {
    const other = await newTenant('import-on-proof-other');
    expect((await list(other.secret_key)).body).toMatchObject({ data: [], pagination: { total: 0 } });
    const reader = (await keyWith(t.tenant_id, ['imports:read'])).secret_key;
    expect((await list(reader)).body.data).toHaveLength(1);
    const others = (await keyWith(t.tenant_id, SCOPES.filter((s) => !s.startsWith('imports:')) as Scope[])).secret_key;
    const refused = await list(others);
    expect([refused.status, refused.body.error]).toEqual([403, 'insufficient_scope']);
  });
});
