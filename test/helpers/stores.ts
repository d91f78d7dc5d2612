import { runMasterKeyIfAny } from './provided';
import { attachToApp } from '../../db/app-providers';
import { createProvenConnection } from './connections';
import { withTenant } from '../../db/tenant-tx';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import type { RunningEmulator } from '../../emulators/common/host';
import { startAllEmulators } from '../../emulators/registry';
import { createAdapters } from '../../providers';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { call, newTenant, startApi } from './api';
import { testDb } from './db';
import { controlFor } from './emulator-control';
import { generateMasterKey } from '../../vault/vault';
import { startTestWorker } from './temporal';
import { startApiProcess } from './api-process';
import type { Services } from '../../operations/services';

/** What the store suites use of the listeners: in-process (startApi) or a real api process. */
interface StackApi {
  /** In-process listeners only: their services (to run an operation as a person, as the dashboard does). */
  services?: Services;
  apiRoot: string;
  apiUrl: string;
  dashboardRoot: string;
  /** The api process's log so far (its LOG_LEVEL in `apiProcessEnv`), for a failure message. */
  log?: () => string;
  close(): Promise<void>;
}

/**
 * The whole stack the store suites run against: every emulator, a real worker, the three
 * listeners, and a tenant whose app is connected to both store emulators (Play: the push
 * audience as its "signing secret"; App Store: no secret, the emulator's root is trusted) and
 * sells `premium_monthly` on both stores.
 */
export async function startStoreStack(name: string, opts: { apiProcessEnv?: NodeJS.ProcessEnv } = {}) {
  const emulators: Record<ProviderId, RunningEmulator> = await startAllEmulators(
    { emulatorPorts: {} as never, dataDir: '' },
    { persistent: false, anyPort: true },
  );
  const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<
    ProviderId,
    string
  >;
  const masterKey = runMasterKeyIfAny() ?? generateMasterKey();
  const worker = await startTestWorker({ config: { providerBaseUrls }, masterKey });
  // `apiProcessEnv`: the real api process (`npm run api`) on the worker's queue and key, with that env added.
  const api: StackApi = opts.apiProcessEnv
    ? await (async () => {
        const p = await startApiProcess({
          TEMPORAL_TASK_QUEUE: worker.taskQueue,
          MASTER_KEY: masterKey,
          ...Object.fromEntries(PROVIDERS.map((id) => [`${id.toUpperCase()}_API_BASE`, providerBaseUrls[id]])),
          ...opts.apiProcessEnv,
        });
        return {
          apiRoot: `http://127.0.0.1:${p.apiPort}`,
          apiUrl: `http://127.0.0.1:${p.apiPort}/v1`,
          dashboardRoot: `http://127.0.0.1:${p.dashboardPort}`,
          log: p.stdout,
          close: p.stop,
        };
      })()
    : await startApi({ config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) });
  const tenant = await newTenant(name);
  const android = await createEmulatorAccount(emulators.store_android.url);
  const ios = await createEmulatorAccount(emulators.store_ios.url);
  await withTenant(testDb(), tenant.tenant_id, async (trx) => {
    await createProvenConnection(trx, worker.vault, {
      provider: 'store_android',
      account_ref: android.account,
      credentials: android.credentials,
      webhook_secret: android.webhook_secret,
    });
    await createProvenConnection(trx, worker.vault, {
      provider: 'store_ios',
      account_ref: ios.account,
      credentials: ios.credentials,
    });
    await attachToApp(trx, tenant.app_id, 'store_android');
    await attachToApp(trx, tenant.app_id, 'store_ios');
    await trx('products').insert({
      tenant_id: tenant.tenant_id,
      sku: 'premium_monthly',
      name: 'Premium',
      tier: 'monthly',
      android_store_product_id: 'premium_monthly',
      ios_store_product_id: 'premium_monthly',
    });
  });
  const keys = await testDb()('apps')
    .where({ id: tenant.app_id })
    .first('publishable_key_test', 'publishable_key_live');
  const controls = {
    store_android: controlFor(() => emulators.store_android.url, { strict: true }),
    store_ios: controlFor(() => emulators.store_ios.url, { strict: true }),
  };
  const stack = {
    emulators,
    worker,
    /** Stop the worker (Temporal keeps what it accepted); `startWorker` brings one back on the same queue and key. */
    async stopWorker() {
      await stack.worker.stop();
    },
    async startWorker() {
      stack.worker = await startTestWorker({ config: { providerBaseUrls, taskQueue: worker.taskQueue }, masterKey });
    },
    api,
    tenant,
    accounts: { store_android: android.account, store_ios: ios.account },
    pkTest: keys.publishable_key_test as string,
    pkLive: keys.publishable_key_live as string,
    control: controls,
    /** POST /v1/sdk/store-purchases with a publishable key (pk_test_ unless given). */
    register: (body: unknown, key?: string) =>
      call(api.apiRoot, '/v1/sdk/store-purchases', key ?? (keys.publishable_key_test as string), {
        method: 'POST',
        body: JSON.stringify(body),
      }),
    subscriber: (user: string, key?: string) =>
      call(
        api.apiRoot,
        `/v1/sdk/subscribers/${encodeURIComponent(user)}`,
        key ?? (keys.publishable_key_test as string),
      ),
    readiness: async () => (await call(api.apiUrl, '/readiness', tenant.secret_key)).body.providers as any[],
    async close() {
      await api?.close();
      await stack.worker?.stop();
      await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
    },
  };
  return stack;
}

export type StoreStack = Awaited<ReturnType<typeof startStoreStack>>;
