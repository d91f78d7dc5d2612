import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getConnectionSafe, type SafeConnection } from '../../db/connections';
import { createConnection, updateConnectionSecrets } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { WorkflowNotFoundError } from '@temporalio/client';
import { startConnectionProof } from '../../temporal/workflow-starts';
import { KIND_ATTR, PROVIDER_ATTR, TENANT_ATTR } from '../../temporal/search-attributes';
import { voidedPurchasesWorkflowId } from '../../workflows/voided-purchases';
import { testDb } from '../helpers/db';
import { newTenant } from '../helpers/api';
import { startStoreStack, type StoreStack } from '../helpers/stores';

/**
 * Issue #18: a store account (an App Store bundle id needs no secret to name) routes events only
 * to the connection that proved it, with an authenticated App Store Connect call for that bundle
 * made with the tenant's own key. A tenant that types someone else's bundle id first neither
 * blocks the owner, nor learns the account is in use, nor receives anything.
 */
describe('store accounts are proven before they receive events', () => {
  let s: StoreStack;
  const target = () => `${s.api.dashboardRoot}/api/webhooks/store_ios`;
  const deliveries = (eventId: string) =>
    testDb()('webhook_deliveries').where({ provider: 'store_ios', event_id: eventId });
  const refusalsSince = (since: Date) =>
    testDb()('webhook_deliveries')
      .where({ provider: 'store_ios', event_type: 'unverified' })
      .where('created_at', '>=', since);
  const notify = (account: string) =>
    s.control.store_ios<{ id: string; status: number }>('POST', '/events', { type: 'TEST', account, target: target() });

  async function prove(tenantId: string, connectionId: string): Promise<SafeConnection> {
    const handle = await startConnectionProof(
      s.worker.client,
      s.worker.taskQueue,
      tenantId,
      connectionId,
      crypto.randomUUID(),
    );
    await handle.result();
    return (await withTenant(testDb(), tenantId, (trx) => getConnectionSafe(trx, connectionId)))!;
  }
  const connect = (tenantId: string, account: string, credentials?: Record<string, unknown>) =>
    withTenant(testDb(), tenantId, (trx) =>
      createConnection(trx, s.worker.vault, {
        provider: 'store_ios',
        account_ref: account,
        ...(credentials ? { credentials: credentials as never } : {}),
      }),
    );

  beforeAll(async () => {
    s = await startStoreStack('account-proof');
  });
  afterAll(async () => s?.close());

  it("B claims A's bundle id first: A still connects and proves it, A gets its notifications, B none and learns nothing", async () => {
    const A = await newTenant('proof-owner');
    const B = await newTenant('proof-squatter');
    const appA = await createEmulatorAccount(s.emulators.store_ios.url); // A's app at the App Store
    const appB = await createEmulatorAccount(s.emulators.store_ios.url); // B's own app: valid keys, for another bundle

    // B types A's bundle id with B's own (valid) App Store Connect keys. Nothing refuses it…
    const claim = await connect(B.tenant_id, appA.account, appB.credentials);
    expect(claim.verified_at).toBeNull();
    // …and the proof fails: B's key sees no app with that bundle id.
    const failedBefore = await prove(B.tenant_id, claim.id);
    expect(failedBefore.verified_at).toBeNull();
    expect(failedBefore.proof_error).toMatch(/no app with bundle id/);

    // An unproven connection gets no events: refused like an account nobody connected, and recorded the same way.
    const since = new Date(Date.now() - 1000);
    const early = await notify(appA.account);
    expect(early.status).toBe(400);
    expect(await deliveries(early.id)).toEqual([]);
    const unknown = await fetch(target(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ signedPayload: 'a.b.c' }),
    });
    const refusals = await refusalsSince(since);
    expect(refusals.map((r) => [r.tenant_id, r.reason])).toContainEqual([null, 'the account is not connected']);
    expect(refusals.every((r) => r.tenant_id === null)).toBe(true);
    expect(unknown.status).toBe(400);

    // A connects the same bundle id (no 409) and proves it with its own key.
    const owner = await connect(A.tenant_id, appA.account, appA.credentials);
    const proven = await prove(A.tenant_id, owner.id);
    expect(proven).toMatchObject({ verified_by: 'provider_call', proof_error: null });
    expect(proven.verified_at).toBeInstanceOf(Date);

    // A's notifications reach A; B receives none.
    const test = await notify(appA.account);
    expect(test.status).toBe(200);
    const bought = await s.control.store_ios<any>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      account: appA.account,
      app_user_id: 'owner_user',
      target: target(),
    });
    expect(bought.notification.status).toBe(200);
    for (const id of [test.id, bought.notification.id]) {
      expect((await deliveries(id)).map((d) => d.tenant_id)).toEqual([A.tenant_id]);
    }
    expect(await testDb()('webhook_deliveries').where({ tenant_id: B.tenant_id })).toEqual([]);

    // B re-running its proof now that A holds the account sees exactly what it saw before: nothing says the account is in use.
    const failedAfter = await prove(B.tenant_id, claim.id);
    expect(failedAfter.verified_at).toBeNull();
    expect(failedAfter.proof_error).toBe(failedBefore.proof_error);
    for (const leak of [A.tenant_id, owner.id]) expect(failedAfter.proof_error).not.toContain(leak);
  });

  it('a second tenant holding the real keys still cannot prove an account already proven: refused without naming the holder', async () => {
    const A = await newTenant('proof-first');
    const C = await newTenant('proof-second');
    const app = await createEmulatorAccount(s.emulators.store_ios.url);
    const first = await connect(A.tenant_id, app.account, app.credentials);
    expect((await prove(A.tenant_id, first.id)).verified_at).toBeInstanceOf(Date);

    // C has the same keys (say, a former contractor): the store call succeeds, the claim is refused.
    const second = await connect(C.tenant_id, app.account, app.credentials);
    const refused = await prove(C.tenant_id, second.id);
    expect(refused.verified_at).toBeNull();
    expect(refused.proof_error).toMatch(/already connected and verified elsewhere/);
    for (const leak of [A.tenant_id, first.id]) expect(refused.proof_error).not.toContain(leak);

    const sent = await notify(app.account);
    expect(sent.status).toBe(200);
    expect((await deliveries(sent.id)).map((d) => d.tenant_id)).toEqual([A.tenant_id]);
  });

  it('a connection created without credentials is proven once they are added (the proof names why it is not yet)', async () => {
    const T = await newTenant('proof-later');
    const app = await createEmulatorAccount(s.emulators.store_ios.url);
    const c = await connect(T.tenant_id, app.account);
    const bare = await prove(T.tenant_id, c.id);
    expect(bare).toMatchObject({ verified_at: null, proof_error: expect.stringMatching(/no credential/) });
    await withTenant(testDb(), T.tenant_id, (trx) =>
      updateConnectionSecrets(trx, s.worker.vault, c.id, { credentials: { test: app.credentials.test } }),
    );
    expect(await prove(T.tenant_id, c.id)).toMatchObject({ verified_by: 'provider_call', proof_error: null });
    const sent = await notify(app.account);
    expect(sent.status).toBe(200);
    expect((await deliveries(sent.id)).map((d) => d.tenant_id)).toEqual([T.tenant_id]);
  });

  it('a Play account gets its Voided Purchases sweep when it is proven, under its tenant; an unproven one gets none', async () => {
    const T = await newTenant('proof-play');
    const app = await createEmulatorAccount(s.emulators.store_android.url);
    const playConnection = (credentials?: Record<string, unknown>) =>
      withTenant(testDb(), T.tenant_id, (trx) =>
        createConnection(trx, s.worker.vault, {
          provider: 'store_android',
          account_ref: app.account,
          ...(credentials ? { credentials: credentials as never } : {}),
        }),
      );
    const sweepOf = (connectionId: string) =>
      s.worker.client.workflow.getHandle(voidedPurchasesWorkflowId(T.tenant_id, connectionId));

    const bare = await playConnection();
    expect((await prove(T.tenant_id, bare.id)).verified_at).toBeNull();
    await expect(sweepOf(bare.id).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);

    await withTenant(testDb(), T.tenant_id, (trx) =>
      updateConnectionSecrets(trx, s.worker.vault, bare.id, { credentials: app.credentials as never }),
    );
    expect(await prove(T.tenant_id, bare.id)).toMatchObject({ verified_by: 'provider_call', proof_error: null });
    const sweep = await sweepOf(bare.id).describe();
    expect(sweep.status.name).toBe('RUNNING');
    expect([
      sweep.typedSearchAttributes.get(TENANT_ATTR),
      sweep.typedSearchAttributes.get(KIND_ATTR),
      sweep.typedSearchAttributes.get(PROVIDER_ATTR),
    ]).toEqual([T.tenant_id, 'voided-purchases', 'store_android']);
    // Proving it again finds the sweep running: still one.
    await prove(T.tenant_id, bare.id);
    expect((await sweepOf(bare.id).describe()).runId).toBe(sweep.runId);
    await sweepOf(bare.id).terminate('test done');
  });
});
