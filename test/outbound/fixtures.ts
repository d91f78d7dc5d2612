import { upsertEntitlement } from '../../db/entitlements';
import { upsertStoreSubscription } from '../../db/subscriptions';
import { withTenant } from '../../db/tenant-tx';
import type { EntitlementState } from '../../domain/entitlement';
import type { SubscriptionStatus } from '../../domain/subscription';
import { loadConfig, type Config } from '../../runtime/config';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { startAllEmulators } from '../../emulators/registry';
import { createAdapters } from '../../providers';
import { call, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { startReceiver } from './receiver';
import { appDb } from '../helpers/db';

/** A state change as the store paths write it: the subscription record, then the entitlement, in one tenant transaction. */
export async function changeEntitlement(
  tenantId: string,
  appUserId: string,
  status: SubscriptionStatus,
  state: EntitlementState,
  externalId = `sub-${appUserId}`,
) {
  await withTenant(appDb(), tenantId, async (trx) => {
    const subscriptionId = await upsertStoreSubscription(trx, {
      tenantId,
      provider: 'store_android',
      externalId,
      status,
      mode: 'test',
      appUserId,
      productId: null,
      currentPeriodEnd: null,
      storeReadAt: new Date().toISOString(),
    });
    await upsertEntitlement(trx, {
      tenantId,
      appUserId,
      provider: 'store_android',
      productId: null,
      subscriptionId,
      state,
      isSandbox: true,
      expiresAt: null,
      graceUntil: null,
    });
  });
}

/** Fast retries so the tests see several attempts within seconds; the switch that lets them deliver to 127.0.0.1. */
export function outboundConfig(o: Partial<Config['outboundWebhooks']> = {}): Partial<Config> {
  return {
    outboundWebhooks: {
      ...loadConfig({ NODE_ENV: 'test' }).outboundWebhooks,
      allowPrivateAddresses: true,
      attemptTimeoutMs: 1500,
      firstRetryMs: 200,
      retryWindowMs: 8_000,
      ...o,
    },
  };
}

export async function createEndpoint(apiUrl: string, key: string, body: Record<string, unknown>) {
  const r = await call(apiUrl, '/webhook-endpoints', key, { method: 'POST', body: JSON.stringify(body) });
  if (r.status !== 200) throw new Error(`create endpoint: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; secret: string; url: string };
}

/**
 * The provider emulators, the inbound and outbound workers with outbound settings, the api and
 * a receiving server: what an end-to-end outbound test runs on. `outbound: false` leaves the
 * outbound worker off until `worker.startOutbound()`.
 */
export async function startOutboundStack(o: { outbound?: boolean } = {}) {
  const emulators = await startAllEmulators(
    { emulatorPorts: {} as never, dataDir: '' },
    { persistent: false, anyPort: true },
  );
  const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<
    ProviderId,
    string
  >;
  const worker = await startTestWorker({
    config: { providerBaseUrls, ...outboundConfig() },
    outbound: o.outbound ?? true,
  });
  const api = await startApi({ config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) });
  const rx = await startReceiver();
  return {
    emulators,
    worker,
    api,
    rx,
    async close() {
      await api.close();
      await worker.stop();
      await rx.close();
      await Promise.all(Object.values(emulators).map((e) => e.close()));
    },
  };
}
