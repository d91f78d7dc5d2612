import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createConnection } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { testDb } from '../helpers/db';
import { newTenant, refill, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';

/**
 * The spec's onboarding sequence through the official MCP client, against the emulators:
 * interrupted after each step and re-run whole, it reaches the same end state with no
 * duplicate anywhere (our tables and every emulator's state).
 */
describe('onboarding over MCP', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let client: Client;

  const tool = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) throw new Error(`${name}: ${(r.content as any[]).map((c) => c.text).join('')}`);
    return r.structuredContent as any;
  };

  const TIERS = [
    ['pro_monthly', 'monthly', 999],
    ['pro_annual', 'annual', 8999],
  ] as const;
  const steps: (() => Promise<unknown>)[] = [
    () => tool('billing_apps'),
    () => tool('billing_create_app', { name: 'Acme iOS' }),
    async () => {
      const apps = (await tool('billing_apps')).data;
      const app = apps.find((a: any) => a.name === 'Acme iOS');
      for (const provider of PROVIDERS) await tool('billing_attach_provider', { provider, app_id: app.id });
    },
    async () => {
      for (const [sku, tier] of TIERS) {
        await tool('billing_create_product', {
          sku,
          tier,
          type: 'subscription',
          android_store_product_id: sku.replace('_', '-'),
          ios_store_product_id: `com.acme.${sku}`,
          trial_per_platform: { web: 7 },
          upsert: true,
        });
      }
    },
    async () => {
      for (const [sku, , amount] of TIERS)
        await tool('billing_set_product_pricing', {
          sku,
          prices: [
            { country: 'US', currency: 'USD', amount },
            { country: 'DE', currency: 'EUR', amount },
          ],
        });
    },
    async () => {
      for (const [sku] of TIERS) {
        const r = await tool('billing_sync_product', { sku });
        expect(r.ok, JSON.stringify(r.verdicts)).toBe(true);
      }
    },
    () => tool('billing_readiness'),
  ];

  async function snapshot() {
    const db = testDb();
    const rows = async (table: string) =>
      Number((await db(table).where({ tenant_id: t.tenant_id }).count({ n: '*' }).first())!.n);
    const ours = Object.fromEntries(
      await Promise.all(
        ['apps', 'app_providers', 'products', 'prices', 'product_provider_refs', 'payment_links', 'provider_plans'].map(
          async (x) => [x, await rows(x)],
        ),
      ),
    );
    const theirs = Object.fromEntries(
      await Promise.all(
        PROVIDERS.map(async (p) => {
          const s = await (await fetch(`${emulators[p].url}/__control/state`)).json();
          return [
            p,
            Object.fromEntries(
              Object.entries(s)
                .filter(([, v]) => Array.isArray(v))
                .map(([k, v]) => [k, (v as unknown[]).length]),
            ),
          ];
        }),
      ),
    );
    return { ours, theirs };
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
    worker = await startTestWorker({ config: { providerBaseUrls } });
    api = await startApi({ config: worker.config });
    t = await newTenant('onboard');
    // What a person did in the dashboard: connect each provider (credentials never pass through tools).
    await withTenant(testDb(), t.tenant_id, async (trx) => {
      for (const provider of PROVIDERS) {
        const acct = await createEmulatorAccount(emulators[provider].url);
        await createConnection(trx, worker.vault, {
          provider,
          account_ref: acct.account,
          credentials: acct.credentials,
          webhook_secret: acct.webhook_secret || null,
        });
      }
    });
    client = new Client({ name: 'onboarding', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.toolsUrl}/`), {
        requestInit: { headers: { authorization: `Bearer ${t.secret_key}` } },
      }),
    );
  });
  afterAll(async () => {
    await client?.close();
    await api?.close();
    await worker?.stop();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it('runs whole, and re-runs whole after an interruption at every step to the same end state', async () => {
    for (const step of steps) await step();
    const end = await snapshot();
    expect(end.ours).toMatchObject({ apps: 2, app_providers: 5, products: 2, prices: 4 });
    expect(end.ours.product_provider_refs).toBe(2 * (3 * 2 + 2));
    for (let k = 1; k < steps.length; k++) {
      await refill(t.tenant_id);
      for (const step of steps.slice(0, k)) await step(); // interrupted after step k
      for (const step of steps) await step(); // re-run whole
      expect(await snapshot(), `after an interruption at step ${k}`).toEqual(end);
    }
    const readiness = await tool('billing_readiness');
    const web = readiness.providers.filter((p: any) => p.auth_kind === 'key_pair');
    expect(web.every((p: any) => p.test_ready)).toBe(true);
    expect(readiness.providers.find((p: any) => p.provider === 'store_ios').manual_steps.length).toBeGreaterThan(0);
    const product = await tool('billing_product', { sku: 'pro_monthly' });
    expect(product.synced).toBe(true);
  }, 240_000); // seven whole runs, each syncing two products to five providers

  it('a write answers synced: false until the product is synced again', async () => {
    const r = await tool('billing_update_product', { sku: 'pro_monthly', trial_per_platform: null });
    expect(r).toMatchObject({ synced: false, trial_per_platform: null });
    const again = await tool('billing_update_product', { sku: 'pro_monthly', trial_per_platform: null });
    expect(again.version).toBe(r.version); // nothing changed: no new version
    expect((await tool('billing_sync_product', { sku: 'pro_monthly' })).ok).toBe(true);
    expect((await tool('billing_product', { sku: 'pro_monthly' })).synced).toBe(true);
  });

  it('refusals: duplicate SKU without upsert, bad ISO codes, secrets, ambiguous connection with candidates', async () => {
    const call = (name: string, args: Record<string, unknown>) =>
      client
        .callTool({ name, arguments: args })
        .then((r) => ({ isError: r.isError, text: (r.content as any[]).map((c) => c.text).join('') }));
    expect(await call('billing_create_product', { sku: 'pro_monthly', tier: 'monthly' })).toMatchObject({
      isError: true,
      text: expect.stringMatching(/^duplicate_sku: /),
    });
    expect(
      (
        await call('billing_set_product_pricing', {
          sku: 'pro_monthly',
          prices: [{ country: 'XX', currency: 'USD', amount: 1 }],
        })
      ).text,
    ).toMatch(/^invalid_request: .*ISO 3166/);
    expect(
      (
        await call('billing_set_product_pricing', {
          sku: 'pro_monthly',
          prices: [{ country: 'US', currency: 'DOLLARS', amount: 1 }],
        })
      ).text,
    ).toMatch(/^invalid_request: .*ISO 4217/);
    expect((await call('billing_attach_provider', { provider: 'psp_a', api_key: 'sk_live_x' })).text).toMatch(
      /^forbidden_field: /,
    );
    // A second psp_a connection, neither default: attaching without account_id is refused with the candidates.
    await withTenant(testDb(), t.tenant_id, async (trx) => {
      await trx('provider_connections').where({ provider: 'psp_a' }).update({ is_default: false });
      const acct = await createEmulatorAccount(emulators.psp_a.url);
      await createConnection(trx, worker.vault, {
        provider: 'psp_a',
        account_ref: acct.account,
        is_default: false,
        credentials: acct.credentials,
      });
    });
    const fresh = await call('billing_create_app', { name: 'Second app' });
    const appId = JSON.parse(fresh.text).id;
    const ambiguous = await call('billing_attach_provider', { provider: 'psp_a', app_id: appId });
    expect(ambiguous.isError).toBe(true);
    expect(ambiguous.text).toMatch(/^ambiguous_connection: .*Candidates: .*acct_/);
  });

  it('retire stops sales at the live stores first; a store refusal leaves the product active and says why', async () => {
    await fetch(`${emulators.store_android.url}/__control/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'error', status: 400 }),
    });
    try {
      const refused = await tool('billing_retire_product', { sku: 'pro_annual' });
      expect(refused).toMatchObject({
        retired: false,
        refused: [expect.objectContaining({ provider: 'store_android' })],
      });
      expect((await tool('billing_product', { sku: 'pro_annual' })).active).toBe(true);
    } finally {
      await fetch(`${emulators.store_android.url}/__control/faults`, { method: 'DELETE' });
    }
    const done = await tool('billing_retire_product', { sku: 'pro_annual' });
    expect(done).toMatchObject({ retired: true, stopped_at: ['store_android', 'store_ios'] });
    expect((await tool('billing_product', { sku: 'pro_annual' })).active).toBe(false);
  });
});
