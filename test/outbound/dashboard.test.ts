import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { call, keyWith, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { expectAccessible, launchBrowser, screenshot, signUp, uniqueEmail } from '../e2e/helpers/browser';
import { changeEntitlement, outboundConfig } from './fixtures';
import { startReceiver, type TestReceiver } from './receiver';

/**
 * The dashboard's webhook endpoints, in real Chromium: add one (secret shown once), see the
 * delivery and its attempts, replay it, disable it with the reason shown; axe on every page.
 */
describe('dashboard: webhook endpoints', () => {
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let browser: Browser;
  let rx: TestReceiver;
  beforeAll(async () => {
    worker = await startTestWorker({ config: outboundConfig(), outbound: true });
    api = await startApi({ config: worker.config, vault: worker.vault });
    browser = await launchBrowser();
    rx = await startReceiver();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await worker?.stop();
    await rx?.close();
  });

  it('add an endpoint, read its secret once, watch a delivery and its attempt, replay it, disable it', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('outbound');
    await signUp(p, api.dashboardRoot, email);
    const tenantId = (await testDb()('dashboard_users').where({ email }).first()).tenant_id;

    await p.getByRole('link', { name: 'Webhook endpoints' }).click();
    await p.waitForURL('**/webhook-endpoints');
    await expectAccessible(p, 'webhook endpoints');
    await p.getByLabel('URL', { exact: true }).fill(rx.url);
    await p.getByLabel('entitlement.active', { exact: true }).check();
    const [post] = await Promise.all([
      p.waitForResponse((r) => r.request().method() === 'POST'),
      p.getByRole('button', { name: 'Add endpoint' }).click(),
    ]);
    expect(post.status()).toBe(303);
    const secret = await p.getByLabel('Signing secret', { exact: true }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    await expectAccessible(p, 'webhook endpoint with its secret');
    await screenshot(p, 'webhook-endpoint-secret');

    await changeEntitlement(tenantId, 'dash-user', 'active', 'active');
    await until(
      'delivered',
      async () => rx.received.length,
      (n) => n === 1,
    );
    const body = rx.verify(rx.received[0], secret);
    expect(body).toMatchObject({ type: 'entitlement.active', data: { app_user_id: 'dash-user' } });

    // A reload is a GET: the secret is gone; the delivery is listed with its attempt.
    await until(
      'logged',
      async () => (await testDb()('outbound_deliveries').where({ event_id: body.id }).first())?.status,
      (s) => s === 'succeeded',
    );
    await p.reload();
    expect(await p.content()).not.toContain(secret);
    await expect(p.getByRole('cell', { name: /entitlement\.active/ }).count()).resolves.toBe(1);
    await p.getByText('1 attempt, last HTTP 200').click();
    await expect(p.getByText(/#1 .*HTTP 200 in \d+ ms/).count()).resolves.toBe(1);
    // The endpoint's workflow id as text; no link to the Temporal UI (the operator's, showing every tenant).
    await expect(p.getByText(new RegExp(`^outbound-${tenantId}-[0-9a-f-]{36}$`)).count()).resolves.toBe(1);
    await expect(p.getByRole('link', { name: /Temporal/ }).count()).resolves.toBe(0);
    await expect(p.locator('a[href*="/namespaces/"]').count()).resolves.toBe(0);
    await expectAccessible(p, 'webhook endpoint deliveries');
    await screenshot(p, 'webhook-endpoint-deliveries');

    await p.getByRole('button', { name: `Replay event ${body.id}` }).click();
    await expect(p.getByRole('status').textContent()).resolves.toContain('Replay queued');
    await until(
      'replayed',
      async () => rx.received.length,
      (n) => n === 2,
    );
    expect(rx.received[1].headers['webhook-id']).toBe(body.id);

    await p.getByRole('button', { name: 'Disable' }).click();
    // The operation's own reason, as when a person disables it through the API.
    await expect(p.locator('#endpoint-status').textContent()).resolves.toBe('Disabled: disabled by a person');
    const deliveries = () => testDb()('outbound_deliveries').where({ tenant_id: tenantId });
    const before = (await deliveries()).length;
    await changeEntitlement(tenantId, 'dash-user-2', 'active', 'active');
    // The change is still recorded (every customer event is chained: docs/event-proofs.md), but a disabled endpoint gets no delivery.
    expect(
      await testDb()('outbound_events')
        .where({ tenant_id: tenantId })
        .whereRaw("body->'data'->>'app_user_id' = 'dash-user-2'"),
    ).toHaveLength(2);
    expect(await deliveries()).toHaveLength(before);
    const audit = await testDb()('audit_entries')
      .where({ tenant_id: tenantId, actor_type: 'user' })
      // Signing in is audited too (account.log_in); the page's writes are the operations.
      .whereRaw("action not like 'account.%'")
      .pluck('action');
    expect(audit.sort()).toEqual(['outbound_events.replay', 'webhook_endpoints.create', 'webhook_endpoints.update']);
    expect(JSON.stringify(await testDb()('audit_entries').where({ tenant_id: tenantId }))).not.toContain(
      secret.slice(6),
    );
    await ctx.close();
  });
  it("writes are the API operations: a refused URL shows the operation's message, and the audit row has the REST row's shape", async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('outbound-ops');
    await signUp(p, api.dashboardRoot, email);
    const user = await testDb()('dashboard_users').where({ email }).first();
    const key = (await keyWith(user.tenant_id, ['webhooks:write', 'webhooks:read'])).secret_key;
    const refusedUrl = 'ftp://example.test/hook';
    const rest = await call(api.apiUrl, '/webhook-endpoints', key, {
      method: 'POST',
      body: JSON.stringify({ url: refusedUrl }),
    });
    expect(rest.status).toBe(400);

    await p.goto(`${api.dashboardRoot}/webhook-endpoints`);
    await p.getByLabel('URL', { exact: true }).fill(refusedUrl);
    const [refused] = await Promise.all([
      p.waitForResponse((r) => r.request().method() === 'POST'),
      p.getByRole('button', { name: 'Add endpoint' }).click(),
    ]);
    expect(refused.status()).toBe(400);
    await expect(p.getByRole('alert').textContent()).resolves.toBe(rest.body.detail);
    // The form keeps what was typed.
    await expect(p.getByLabel('URL', { exact: true }).inputValue()).resolves.toBe(refusedUrl);

    await p.getByLabel('URL', { exact: true }).fill(`${rx.url}/dash`);
    const [made] = await Promise.all([
      p.waitForResponse((r) => r.request().method() === 'POST'),
      p.getByRole('button', { name: 'Add endpoint' }).click(),
    ]);
    expect(made.status()).toBe(303);
    const viaRest = await call(api.apiUrl, '/webhook-endpoints', key, {
      method: 'POST',
      body: JSON.stringify({ url: `${rx.url}/rest` }),
    });
    expect(viaRest.status).toBe(200);

    const rows = await testDb()('audit_entries')
      .where({ tenant_id: user.tenant_id, action: 'webhook_endpoints.create' })
      .orderBy('created_at');
    const shape = (r: any) => ({
      action: r.action,
      outcome: r.outcome,
      detail: Object.keys(r.detail ?? {}).sort(),
      surface: r.detail?.surface,
      actor: r.actor_type,
    });
    const byOutcome = (surface: string, outcome: string) =>
      rows.find((r: any) => r.detail?.surface === surface && r.outcome === outcome);
    const dashOk = byOutcome('dashboard', 'ok');
    const restOk = byOutcome('rest', 'ok');
    expect(shape(dashOk)).toEqual({ ...shape(restOk), surface: 'dashboard', actor: 'user' });
    expect(dashOk.actor_id).toBe(user.id);
    expect(dashOk.detail.id).toBe(new URL(p.url()).pathname.split('/').pop());
    // Refusals too: one row each, the same code.
    expect(shape(byOutcome('dashboard', 'invalid_request'))).toEqual({
      ...shape(byOutcome('rest', 'invalid_request')),
      surface: 'dashboard',
      actor: 'user',
    });
    await ctx.close();
  });
});
