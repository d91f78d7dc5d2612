import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { insertEndpoint } from '../../db/outbound-endpoints';
import { withTenant } from '../../db/tenant-tx';
import { createVault, generateMasterKey } from '../../vault/vault';
import { newTenant } from '../helpers/api';
import { appDb, testDb } from '../helpers/db';

/**
 * The SECURITY DEFINER triggers that record outbound events run as the owner, past RLS: what they
 * read of other tables must be the row's own tenant's. And the keys that point from one tenant
 * row to another carry the tenant where that is cheap, so such a link cannot be written at all.
 * The links here are written as the owner (bypassing RLS), as a flaw elsewhere would.
 */
describe('outbound triggers and keys stay within the tenant', () => {
  const vault = createVault(generateMasterKey());
  let a: Awaited<ReturnType<typeof newTenant>>;
  let b: Awaited<ReturnType<typeof newTenant>>;
  let endpointA: string;
  let endpointB: string;
  let subscriptionB: string;
  let productB: string;

  beforeAll(async () => {
    a = await newTenant('keys-a');
    b = await newTenant('keys-b');
    // Endpoints on a queue nobody serves: the events are recorded and stay for the test to read.
    const queue = `unserved-${crypto.randomBytes(4).toString('hex')}`;
    endpointA = (
      await withTenant(appDb(), a.tenant_id, (trx) =>
        insertEndpoint(trx, vault, {
          tenantId: a.tenant_id,
          url: 'https://example.com/a',
          description: null,
          eventTypes: [],
          taskQueue: queue,
        }),
      )
    ).row.id;
    endpointB = (
      await withTenant(appDb(), b.tenant_id, (trx) =>
        insertEndpoint(trx, vault, {
          tenantId: b.tenant_id,
          url: 'https://example.com/b',
          description: null,
          eventTypes: [],
          taskQueue: queue,
        }),
      )
    ).row.id;
    [{ id: productB }] = await testDb()('products')
      .insert({ tenant_id: b.tenant_id, sku: 'b-private-sku', name: 'B only', tier: 'monthly' })
      .returning('id');
    [{ id: subscriptionB }] = await testDb()('subscriptions')
      .insert({
        tenant_id: b.tenant_id,
        provider: 'store_android',
        mode: 'test',
        status: 'refunded',
        external_id: `b-${crypto.randomUUID()}`,
        app_user_id: 'b-user',
      })
      .returning('id');
  });

  it('an entitlement naming another tenant’s subscription records its event without that subscription’s status', async () => {
    await testDb()('entitlements').insert({
      tenant_id: a.tenant_id,
      app_user_id: 'a-user',
      provider: 'store_android',
      subscription_id: subscriptionB,
      state: 'active',
      is_sandbox: true,
    });
    const event = await testDb()('outbound_events')
      .where({ tenant_id: a.tenant_id, type: 'entitlement.active' })
      .first('body');
    expect(event.body.data).toMatchObject({ app_user_id: 'a-user', subscription_id: subscriptionB, reason: null });
    expect(JSON.stringify(event.body)).not.toContain('refunded');
  });

  it('a row cannot point at another tenant’s product or endpoint: the composite keys refuse it', async () => {
    const refused = /violates foreign key constraint/;
    await expect(
      testDb()('entitlements').insert({
        tenant_id: a.tenant_id,
        app_user_id: 'a-user-2',
        provider: 'store_android',
        product_id: productB,
        state: 'active',
        is_sandbox: true,
      }),
    ).rejects.toThrow(refused);
    await expect(
      testDb()('subscriptions').insert({
        tenant_id: a.tenant_id,
        provider: 'store_android',
        mode: 'test',
        status: 'active',
        external_id: `a-${crypto.randomUUID()}`,
        product_id: productB,
      }),
    ).rejects.toThrow(refused);
    const [{ id: eventA }] = await testDb()('outbound_events')
      .insert({ tenant_id: a.tenant_id, type: 'sync_run.finished', order_key: `evt-${crypto.randomUUID()}`, body: {} })
      .returning('id');
    await expect(
      testDb()('outbound_deliveries').insert({ tenant_id: a.tenant_id, event_id: eventA, endpoint_id: endpointB }),
    ).rejects.toThrow(refused);
    await expect(
      testDb()('outbound_drains').insert({ tenant_id: a.tenant_id, endpoint_id: endpointB, lease_until: new Date() }),
    ).rejects.toThrow(refused);
    // Their own tenant's: fine.
    await testDb()('outbound_deliveries').insert({ tenant_id: a.tenant_id, event_id: eventA, endpoint_id: endpointA });
    expect(await testDb()('products').where({ id: productB }).first('sku')).toEqual({ sku: 'b-private-sku' });
  });

  it('deleting a product unlinks it and keeps the row’s tenant; deleting an endpoint takes its deliveries', async () => {
    const [{ id: productA }] = await testDb()('products')
      .insert({ tenant_id: a.tenant_id, sku: 'a-sku', name: 'A', tier: 'monthly' })
      .returning('id');
    const [{ id: ent }] = await testDb()('entitlements')
      .insert({
        tenant_id: a.tenant_id,
        app_user_id: 'a-user-3',
        provider: 'store_android',
        product_id: productA,
        state: 'active',
        is_sandbox: true,
      })
      .returning('id');
    const event = await testDb()('outbound_events')
      .where({ tenant_id: a.tenant_id })
      .whereRaw(`body->'data'->>'app_user_id' = 'a-user-3'`)
      .first('body');
    expect(event.body.data).toMatchObject({ product_id: productA, sku: 'a-sku' });
    await testDb()('products').where({ id: productA }).del();
    expect(await testDb()('entitlements').where({ id: ent }).first('tenant_id', 'product_id')).toEqual({
      tenant_id: a.tenant_id,
      product_id: null,
    });
    expect(
      Number((await testDb()('outbound_deliveries').where({ endpoint_id: endpointA }).count({ n: '*' }).first())!.n),
    ).toBeGreaterThan(0);
    await withTenant(appDb(), a.tenant_id, (trx) => trx('webhook_endpoints').where({ id: endpointA }).del());
    expect(
      Number((await testDb()('outbound_deliveries').where({ endpoint_id: endpointA }).count({ n: '*' }).first())!.n),
    ).toBe(0);
  });
});
