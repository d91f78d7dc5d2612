import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { findConnectionByAccount, getConnectionSafe, type SafeConnection } from '../../db/connections';
import { connectProvenByOAuth, createConnection, markConnectionProven } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import { keyOnlyProofNote, RELEASED_BY_OAUTH } from '../../domain/account-proof';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import type { RunningEmulator } from '../../emulators/common/host';
import { startAllEmulators } from '../../emulators/registry';
import { createAdapters } from '../../providers';
import { webhookRefusals } from '../../runtime/metrics';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { startConnectionProof } from '../../temporal/workflow-starts';
import { newTenant, startApi } from '../helpers/api';
import { appDb, testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { launchBrowser, signUp, uniqueEmail } from '../e2e/helpers/browser';

type OAuthOnly = 'psp_b' | 'psp_c';

/**
 * Issue #28, item 6: a Paddle (psp_b) or Razorpay (psp_c) API key names no account, so a pasted
 * key that works proved only that it works, and the first tenant to paste any working key beside
 * someone's account id held that account: its events went to the squatter (as refusals, and
 * `inbound_delivery.failed` events there), and the owner's OAuth was refused. Now only OAuth
 * claims those accounts; an OAuth proof replaces a claim made with a pasted key before the
 * change; events for an account nobody proved are refused under no tenant, and counted.
 * Driven as people do it: the dashboard in Chromium, the emulators' own consent pages, and
 * events signed by the emulators with the account's real secret.
 */
describe('psp_b and psp_c accounts are claimed by OAuth, never by a pasted key', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  const target = (p: ProviderId) => `${api.dashboardRoot}/api/webhooks/${p}`;
  const EVENT: Record<OAuthOnly, string> = { psp_b: 'subscription.created', psp_c: 'subscription.activated' };
  /** An event from the account, signed by the emulator with the account's own webhook secret. */
  async function eventFrom(p: OAuthOnly, account: string): Promise<{ id: string; status: number }> {
    const res = await fetch(`${emulators[p].url}/__control/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: EVENT[p], target: target(p), account }),
    });
    return res.json();
  }
  const deliveriesOf = (tenantId: string, p: ProviderId) =>
    testDb()('webhook_deliveries').where({ tenant_id: tenantId, provider: p });
  const connectionOf = async (tenantId: string, p: ProviderId, account: string): Promise<SafeConnection> => {
    const row = await testDb()('provider_connections')
      .where({ tenant_id: tenantId, provider: p, account_ref: account })
      .first('id');
    return (await withTenant(testDb(), tenantId, (trx) => getConnectionSafe(trx, row.id)))!;
  };
  const unclaimedCount = async (p: ProviderId) =>
    (await webhookRefusals.get()).values
      .filter((v) => v.labels.provider === p && v.labels.reason === 'unclaimed_account')
      .reduce((n, v) => n + v.value, 0);

  async function person(tag: string): Promise<{ page: Page; tenantId: string }> {
    const ctx = await browser.newContext();
    contexts.push(ctx);
    const page = await ctx.newPage();
    const email = uniqueEmail(tag);
    await signUp(page, api.dashboardRoot, email);
    return { page, tenantId: (await testDb()('dashboard_users').where({ email }).first()).tenant_id };
  }
  const main = (page: Page) => page.locator('main').textContent();

  /** Providers → Connect <p> → the emulator's consent page, naming the account → back on the dashboard. */
  async function connectWithOAuth(page: Page, p: OAuthOnly, account: string): Promise<void> {
    await page.goto(`${api.dashboardRoot}/providers`);
    await page.getByRole('link', { name: `Connect ${p}` }).click();
    await page.waitForURL(`${emulators[p].url}/**`);
    if (p === 'psp_b') await page.getByLabel('Seller ID').fill(account);
    else await page.getByLabel('Account').selectOption(account);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.waitForURL(`${api.dashboardRoot}/providers?connected=*`);
    await expect(page.getByRole('status').textContent()).resolves.toContain('Connected');
  }

  async function saveSecrets(
    page: Page,
    p: OAuthOnly,
    credentials: Record<string, string> | null,
    webhookSecret: string,
  ): Promise<void> {
    if (credentials && p === 'psp_b') await page.getByLabel('Test API key').fill(credentials.api_key);
    if (credentials && p === 'psp_c') {
      await page.getByLabel('Test Key ID').fill(credentials.key_id);
      await page.getByLabel('Test Key secret').fill(credentials.key_secret);
    }
    await page.getByLabel('Webhook signing secret').fill(webhookSecret);
    await page.getByRole('button', { name: 'Save secrets' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Saved');
  }

  beforeAll(async () => {
    emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<
      ProviderId,
      string
    >;
    // A worker runs the proofs the dashboard starts (probe workflow).
    worker = await startTestWorker({ config: { providerBaseUrls } });
    api = await startApi({
      config: {
        ...worker.config,
        // The platform's OAuth clients at the two emulators (psp_c pins a client at its first token
        // exchange; Razorpay client ids are at most 14 letters and digits).
        oauthClients: {
          psp_b: { client_id: 'billing_platform', client_secret: 'platform-secret-b' },
          psp_c: { client_id: 'billingapp', client_secret: 'platform-secret-c' },
        },
      },
      vault: worker.vault,
      adapters: createAdapters(worker.config),
    });
    // The OAuth redirect_uri is PUBLIC_DASHBOARD_URL's: this test's listener is it.
    api.services.config.publicDashboardUrl = api.dashboardRoot;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await api?.close();
    await worker?.stop();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  for (const p of ['psp_b', 'psp_c'] as const) {
    it(`${p}: a working key pasted beside the owner's account id claims nothing; events wait under no tenant; the owner's OAuth connects and receives them`, async () => {
      const owners = await createEmulatorAccount(emulators[p].url);
      const squattersOwn = await createEmulatorAccount(emulators[p].url); // the squatter's real seller: its key works
      const squatter = await person(`squat-${p}`);

      // The squatter types the owner's account id and pastes its own, working, key.
      await squatter.page.goto(`${api.dashboardRoot}/providers`);
      await squatter.page.getByLabel('Provider').selectOption(p);
      await squatter.page.getByLabel('Account ID').fill(owners.account);
      await squatter.page.getByRole('button', { name: 'Add connection' }).click();
      await squatter.page.waitForURL(/\/providers\/[0-9a-f-]{36}$/);
      await saveSecrets(
        squatter.page,
        p,
        squattersOwn.credentials.test,
        `whsec_squatter_${crypto.randomBytes(8).toString('hex')}`,
      );
      // Verify waits for the proof: the key works (the connection can sync), but it proves nothing about the account.
      await Promise.all([
        squatter.page.waitForURL(/\/verify$/),
        squatter.page.getByRole('button', { name: 'Verify' }).click(),
      ]);
      const claim = await connectionOf(squatter.tenantId, p, owners.account);
      expect(claim).toMatchObject({
        verified_at: null,
        verified_by: null,
        proof_error: keyOnlyProofNote(p),
        has_test_credential: true,
      });
      expect(await findConnectionByAccount(testDb(), p, owners.account)).toBeNull();
      await expect(squatter.page.getByRole('alert').textContent()).resolves.toBe(
        `Not verified: ${keyOnlyProofNote(p)}`,
      );
      await expect(main(squatter.page)).resolves.toContain(
        `Events for a ${p} account are delivered only to a connection made with OAuth`,
      );

      // The owner's real events, before the owner connects: refused, stored under no tenant, counted.
      const unclaimedBefore = await unclaimedCount(p);
      const since = new Date(Date.now() - 1000);
      const early = await eventFrom(p, owners.account);
      expect(early.status).toBe(400);
      expect(await deliveriesOf(squatter.tenantId, p)).toEqual([]);
      expect(await testDb()('outbound_events').where({ tenant_id: squatter.tenantId })).toEqual([]);
      const orphans = await testDb()('webhook_deliveries')
        .where({ provider: p, event_type: 'unverified' })
        .whereNull('tenant_id')
        .where('created_at', '>=', since);
      expect(orphans.map((r) => [r.status, r.reason])).toContainEqual(['failed', 'the account is not connected']);
      expect(await unclaimedCount(p)).toBe(unclaimedBefore + 1);

      // The owner connects with OAuth (not refused), adds its signing secret, and receives its events.
      const owner = await person(`owner-${p}`);
      await connectWithOAuth(owner.page, p, owners.account);
      const proven = await connectionOf(owner.tenantId, p, owners.account);
      expect(proven).toMatchObject({ verified_by: 'oauth', proof_error: null });
      await owner.page.goto(`${api.dashboardRoot}/providers/${proven.id}`);
      await expect(main(owner.page)).resolves.toContain('Verified (OAuth)');
      await saveSecrets(owner.page, p, null, owners.webhook_secret);
      const sent = await eventFrom(p, owners.account);
      expect(sent.status).toBe(200);
      expect((await deliveriesOf(owner.tenantId, p)).map((d) => d.event_id)).toEqual([sent.id]);
      expect(await deliveriesOf(squatter.tenantId, p)).toEqual([]);

      // The squatter's connection is still there, still unproven, still saying why.
      await squatter.page.reload();
      await expect(main(squatter.page)).resolves.toContain(`Not verified: ${keyOnlyProofNote(p)}`);
    });
  }

  it("psp_c: OAuth replaces a claim made with a pasted key before the change; that tenant's connection stays, unproven, and its dashboard says why", async () => {
    const p = 'psp_c';
    const owners = await createEmulatorAccount(emulators[p].url);
    const holder = await person('legacy-holder');
    const holdersOwn = await createEmulatorAccount(emulators[p].url);
    // What the schema leaves of a psp_c connection proven by its pasted key before it.
    const legacy = await withTenant(testDb(), holder.tenantId, (trx) =>
      createConnection(trx, worker.vault, {
        provider: p,
        account_ref: owners.account,
        credentials: { test: holdersOwn.credentials.test },
        webhook_secret: `whsec_holder_${crypto.randomBytes(8).toString('hex')}`,
      }),
    );
    await testDb()('provider_connections')
      .where({ id: legacy.id })
      .update({ verified_at: testDb().fn.now(), verified_by: 'pasted_key' });
    expect(await findConnectionByAccount(testDb(), p, owners.account)).toEqual({
      tenant_id: holder.tenantId,
      connection_id: legacy.id,
    });
    await holder.page.goto(`${api.dashboardRoot}/providers/${legacy.id}`);
    await expect(main(holder.page)).resolves.toContain(
      'Verified (pasted key, until the account is connected with OAuth)',
    );

    // The owner connects with OAuth: not refused; the pasted-key claim is released.
    const owner = await person('legacy-owner');
    await connectWithOAuth(owner.page, p, owners.account);
    const proven = await connectionOf(owner.tenantId, p, owners.account);
    expect(proven).toMatchObject({ verified_by: 'oauth' });
    expect(await findConnectionByAccount(testDb(), p, owners.account)).toEqual({
      tenant_id: owner.tenantId,
      connection_id: proven.id,
    });
    const audit = await testDb()('audit_entries')
      .where({ tenant_id: owner.tenantId, action: 'providers.connect_oauth' })
      .first();
    expect(audit).toMatchObject({ outcome: 'ok', detail: expect.objectContaining({ replaced_claims: 1 }) });

    // The holder keeps its connection (credentials and all, for API calls) but no longer its events, and is told so.
    expect(await connectionOf(holder.tenantId, p, owners.account)).toMatchObject({
      id: legacy.id,
      verified_at: null,
      verified_by: null,
      has_test_credential: true,
      proof_error: RELEASED_BY_OAUTH,
    });
    await holder.page.reload();
    await expect(main(holder.page)).resolves.toContain(`Not verified: ${RELEASED_BY_OAUTH}`);
    for (const leak of [owner.tenantId, proven.id]) expect(RELEASED_BY_OAUTH).not.toContain(leak);

    await owner.page.goto(`${api.dashboardRoot}/providers/${proven.id}`);
    await saveSecrets(owner.page, p, null, owners.webhook_secret);
    const sent = await eventFrom(p, owners.account);
    expect(sent.status).toBe(200);
    expect((await deliveriesOf(owner.tenantId, p)).map((d) => d.event_id)).toEqual([sent.id]);
    expect(await deliveriesOf(holder.tenantId, p)).toEqual([]);
  });

  it('the rules under the flows: no psp_b/psp_c proof by key, even with the real key; OAuth replaces only pasted-key claims', async () => {
    const proveByProbe = async (tenantId: string, connectionId: string) => {
      await (
        await startConnectionProof(worker.client, worker.taskQueue, tenantId, connectionId, crypto.randomUUID())
      ).result();
      return (await withTenant(testDb(), tenantId, (trx) => getConnectionSafe(trx, connectionId)))!;
    };
    for (const p of ['psp_b', 'psp_c'] as const) {
      // Even the account's own key, pasted by its owner: it works, and still claims nothing.
      const acct = await createEmulatorAccount(emulators[p].url);
      const t = await newTenant(`own-key-${p}`);
      const c = await withTenant(testDb(), t.tenant_id, (trx) =>
        createConnection(trx, worker.vault, {
          provider: p,
          account_ref: acct.account,
          credentials: acct.credentials,
          webhook_secret: acct.webhook_secret,
        }),
      );
      expect(await proveByProbe(t.tenant_id, c.id)).toMatchObject({
        verified_at: null,
        proof_error: keyOnlyProofNote(p),
      });
      expect((await eventFrom(p, acct.account)).status).toBe(400);
      // The database refuses a psp_b/psp_c row proven by a provider call, whatever code tries.
      await expect(
        testDb()('provider_connections')
          .where({ id: c.id })
          .update({ verified_at: testDb().fn.now(), verified_by: 'provider_call' }),
      ).rejects.toThrow(/provider_connections_key_claims/);
      // Its own OAuth proves it (the same row, upgraded), after which a key re-check only refreshes the check.
      const viaOAuth = await withTenant(testDb(), t.tenant_id, (trx) =>
        connectProvenByOAuth(trx, worker.vault, {
          provider: p,
          account_ref: acct.account,
          credentials: { test: acct.credentials.test },
        }),
      );
      expect(viaOAuth).toMatchObject({ id: c.id, verified_by: 'oauth', proof_error: null, replaced_claims: 0 });
      expect(await proveByProbe(t.tenant_id, c.id)).toMatchObject({ verified_by: 'oauth', proof_error: null });
      expect((await eventFrom(p, acct.account)).status).toBe(200);
    }

    // A tenant's own pasted-key claim becomes an OAuth one; another tenant's OAuth claim is never replaced.
    const account = `acc_rules_${crypto.randomBytes(6).toString('hex')}`;
    const a = await newTenant('rules-a');
    const b = await newTenant('rules-b');
    const mine = await withTenant(testDb(), a.tenant_id, (trx) =>
      createConnection(trx, worker.vault, { provider: 'psp_c', account_ref: account }),
    );
    await testDb()('provider_connections')
      .where({ id: mine.id })
      .update({ verified_at: testDb().fn.now(), verified_by: 'pasted_key' });
    const upgraded = await withTenant(testDb(), a.tenant_id, (trx) =>
      connectProvenByOAuth(trx, worker.vault, {
        provider: 'psp_c',
        account_ref: account,
        credentials: { test: { access_token: 'rzp_emu_at_x' } },
      }),
    );
    expect(upgraded).toMatchObject({ id: mine.id, verified_by: 'oauth' });
    await expect(
      withTenant(testDb(), b.tenant_id, (trx) =>
        connectProvenByOAuth(trx, worker.vault, {
          provider: 'psp_c',
          account_ref: account,
          credentials: { test: { access_token: 'rzp_emu_at_y' } },
        }),
      ),
    ).rejects.toMatchObject({ code: 'account_already_connected' });
    expect(await findConnectionByAccount(testDb(), 'psp_c', account)).toEqual({
      tenant_id: a.tenant_id,
      connection_id: mine.id,
    });
    // The release runs only for the caller's own connection, inside its tenant transaction.
    await expect(
      withTenant(appDb(), b.tenant_id, (trx) => trx.raw('select release_pasted_key_claims(?)', [mine.id])),
    ).rejects.toThrow(/no such connection of this tenant/);
    await expect(appDb().raw('select release_pasted_key_claims(?)', [mine.id])).rejects.toThrow(/permission denied/);
    // The refused attempt left nothing behind in B (its transaction rolled back), and a key proof is refused by name.
    expect(await testDb()('provider_connections').where({ tenant_id: b.tenant_id })).toEqual([]);
    await expect(
      withTenant(testDb(), a.tenant_id, async (trx) => {
        const other = await createConnection(trx, worker.vault, { provider: 'psp_b', account_ref: `pdl_${account}` });
        return markConnectionProven(trx, other.id, 'provider_call');
      }),
    ).rejects.toMatchObject({ code: 'oauth_required', message: keyOnlyProofNote('psp_b') });
  });
});
