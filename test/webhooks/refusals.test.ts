import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Knex } from 'knex';
import { createKnex } from '../../db/knex';
import { recordRefusal, REFUSALS_KEPT_PER_MINUTE } from '../../db/webhook-deliveries';
import { withTenant } from '../../db/tenant-tx';
import { createAdapters } from '../../providers';
import { loadConfig } from '../../runtime/config';
import { createVault, generateMasterKey } from '../../vault/vault';
import { newTenant, startApi } from '../helpers/api';
import { createProvenConnection } from '../helpers/connections';
import { testDb } from '../helpers/db';
import { until } from '../helpers/until';

/**
 * Issue #28 (Low): a POST anyone can send, unsigned or badly signed, that names a tenant's
 * connected account is refused and kept in that tenant's delivery log (at most
 * REFUSALS_KEPT_PER_MINUTE a minute), but it is not the tenant's provider speaking: it must not
 * become an `inbound_delivery.failed` event at the tenant's endpoints. And the per-minute cap is
 * one decision per refusal, not a count and an insert that concurrent requests both pass.
 */
describe('refused webhooks: nothing pushed for what nobody signed, and a cap that holds under concurrency', () => {
  const vault = createVault(generateMasterKey());
  const config = loadConfig({ NODE_ENV: 'test' });
  // A pool as wide as a busy api's: concurrent receipts really do run their statements side by side.
  let wide: Knex;
  let api: Awaited<ReturnType<typeof startApi>>;
  const target = () => `${api.dashboardRoot}/api/webhooks/psp_a`;

  /** A tenant with a proven psp_a account and an endpoint that wants every event type. */
  async function tenantWithEndpoint(name: string) {
    const t = await newTenant(name);
    const account = `acct_refusals_${crypto.randomBytes(6).toString('hex')}`;
    const secret = `whsec_${crypto.randomBytes(24).toString('base64url')}`;
    await withTenant(testDb(), t.tenant_id, (trx) =>
      createProvenConnection(trx, vault, { provider: 'psp_a', account_ref: account, webhook_secret: secret }),
    );
    // No worker serves this queue: what the trigger records stays in the tables, to be read.
    await testDb()('webhook_endpoints').insert({
      tenant_id: t.tenant_id,
      url: 'https://receiver.example.test/hook',
      secret_enc: 'v1:unused',
      task_queue: `nobody-${crypto.randomUUID()}`,
    });
    return { t, account, secret };
  }
  const outboundOf = (tenantId: string) =>
    testDb()('outbound_events').where({ tenant_id: tenantId, type: 'inbound_delivery.failed' });
  const refusalsOf = (tenantId: string) =>
    testDb()('webhook_deliveries').where({ tenant_id: tenantId, status: 'failed' });
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(target(), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const event = (account: string, object: Record<string, unknown>, type = 'customer.subscription.created') =>
    JSON.stringify({
      id: `evt_${crypto.randomBytes(8).toString('hex')}`,
      object: 'event',
      account,
      type,
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      data: { object },
    });
  const stripeSignature = (secret: string, body: string) => {
    const ts = Math.floor(Date.now() / 1000);
    return `t=${ts},v1=${crypto.createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`;
  };

  beforeAll(async () => {
    wide = createKnex(inject('appDatabaseUrl'), { max: 24 });
    api = await startApi({ db: wide, config, vault, adapters: createAdapters(config) });
  });
  afterAll(async () => {
    await api?.close();
    await wide?.destroy();
  });

  it('unsigned and badly signed POSTs naming the account are logged for the tenant, and push nothing to its endpoints', async () => {
    const { t, account } = await tenantWithEndpoint('refusals-quiet');
    const body = event(account, { id: 'sub_forged', object: 'subscription', customer: 'cus_forged' });
    const unsigned = await post(body);
    const forged = await post(body, {
      'stripe-signature': stripeSignature(`whsec_${crypto.randomBytes(24).toString('base64url')}`, body),
    });
    expect([unsigned.status, forged.status]).toEqual([400, 400]);
    // The tenant can still read them in its own delivery log (GET /v1/webhooks?status=failed)…
    const kept = await refusalsOf(t.tenant_id);
    expect(kept.map((r) => [r.event_type, r.reason.startsWith('signature not verified')])).toEqual([
      ['unverified', true],
      ['unverified', true],
    ]);
    // …but a stranger's POST is not an event of the tenant's provider: no outbound event, no delivery queued.
    expect(await outboundOf(t.tenant_id)).toEqual([]);
    expect(await testDb()('outbound_deliveries').where({ tenant_id: t.tenant_id })).toEqual([]);
  });

  it("a refusal of the tenant's own, signed event (its provider spoke) is still an inbound_delivery.failed event", async () => {
    const { t, account, secret } = await tenantWithEndpoint('refusals-signed');
    const body = event(account, { id: 'sub_long', object: 'subscription', customer: `cus_${'a'.repeat(1200)}` });
    const res = await post(body, { 'stripe-signature': stripeSignature(secret, body) });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe('invalid_event');
    const [row] = await refusalsOf(t.tenant_id);
    expect(row).toMatchObject({
      event_type: 'invalid',
      reason: expect.stringMatching(/customer_id is 1204 characters long/),
    });
    const [pushed] = await outboundOf(t.tenant_id);
    expect(pushed.body).toMatchObject({
      type: 'inbound_delivery.failed',
      data: { provider: 'psp_a', event_type: 'invalid', delivery_id: row.id },
    });
  });

  it(`${REFUSALS_KEPT_PER_MINUTE * 8} concurrent unsigned POSTs naming one account keep exactly ${REFUSALS_KEPT_PER_MINUTE} rows`, async () => {
    const { t, account } = await tenantWithEndpoint('refusals-flood');
    const statuses = await Promise.all(
      Array.from({ length: REFUSALS_KEPT_PER_MINUTE * 8 }, (_, i) =>
        post(event(account, { id: `sub_flood_${i}`, object: 'subscription', customer: `cus_flood_${i}` })).then(
          (r) => r.status,
        ),
      ),
    );
    expect(new Set(statuses)).toEqual(new Set([400]));
    expect(await refusalsOf(t.tenant_id)).toHaveLength(REFUSALS_KEPT_PER_MINUTE);
    expect(await outboundOf(t.tenant_id)).toEqual([]);
  });

  it('the same burst straight at the refusal writer, over as many connections, still keeps exactly the cap (three rounds)', async () => {
    for (let round = 0; round < 3; round++) {
      const t = await newTenant('refusals-burst');
      // Every connection open first, so the statements below really start together.
      await Promise.all(Array.from({ length: 24 }, () => wide.raw('select 1')));
      const kept = await Promise.all(
        Array.from({ length: REFUSALS_KEPT_PER_MINUTE * 10 }, () =>
          recordRefusal(wide, {
            tenantId: t.tenant_id,
            provider: 'psp_c',
            reason: 'signature not verified: test',
            bytes: 10,
          }),
        ),
      );
      expect(await testDb()('webhook_deliveries').where({ tenant_id: t.tenant_id })).toHaveLength(
        REFUSALS_KEPT_PER_MINUTE,
      );
      expect(kept.filter(Boolean)).toHaveLength(REFUSALS_KEPT_PER_MINUTE);
    }
  });

  it('the cap is one decision: a refusal waiting on another that is about to fill the window is not kept', async () => {
    const t = await newTenant('refusals-interleaved');
    const refusal = (db: Knex) =>
      recordRefusal(db, {
        tenantId: t.tenant_id,
        provider: 'psp_b',
        reason: 'signature not verified: test',
        bytes: 10,
      });
    for (let i = 0; i < REFUSALS_KEPT_PER_MINUTE - 1; i++) await refusal(wide);
    // Two receipts at once, each in its own transaction: one takes the last place, the other must see it taken.
    const first = await wide.transaction();
    const second = await wide.transaction();
    try {
      await refusal(first);
      const pending = refusal(second);
      // The second really waits on the first's lock before the first commits.
      await until(
        'the second refusal waits on the first',
        () =>
          testDb().raw(
            `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and wait_event = 'advisory' and datname = current_database()`,
          ),
        (r) => r.rows[0].n > 0,
        10_000,
      );
      await first.commit();
      await pending;
      await second.commit();
    } finally {
      if (!first.isCompleted()) await first.rollback();
      if (!second.isCompleted()) await second.rollback();
    }
    expect(await testDb()('webhook_deliveries').where({ tenant_id: t.tenant_id, provider: 'psp_b' })).toHaveLength(
      REFUSALS_KEPT_PER_MINUTE,
    );
  });
});
