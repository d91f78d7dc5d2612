import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ProviderId } from '../../domain/providers';
import type { RunningEmulator } from '../../emulators/common/host';
import { call, newTenant, startApi } from '../helpers/api';
import { sellOnWebProvider } from '../helpers/connections';
import { testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { useEmulatorStack } from '../helpers/emulator-stack';
import { until } from '../helpers/until';

/**
 * psp_b (Paddle `GET /subscriptions`, `after` cursor) and psp_c (Razorpay `GET /v1/subscriptions`,
 * count/skip): subscriptions bought while every notification was lost, brought in by an import,
 * across more than one page of the provider's list.
 */
describe.each([['psp_b'], ['psp_c']] as const)('import from %s', (provider) => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  // The five emulators, a worker calling them and the listeners, closed after the file.
  const stack = useEmulatorStack();
  let t: Awaited<ReturnType<typeof newTenant>>;
  const BUYERS = 105; // more than one page of 100

  beforeAll(async () => {
    ({ emulators, worker, api } = stack);
    t = await newTenant(`imports-${provider}`);
    const { account } = await sellOnWebProvider({
      provider,
      emulatorUrl: emulators[provider].url,
      vault: worker.vault,
      apiUrl: api.apiUrl,
      tenant: t,
    });
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const lost = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/nowhere`;
    await new Promise<void>((r) => server.close(() => r()));
    for (let i = 0; i < BUYERS; i++) {
      const res = await fetch(`${emulators[provider].url}/__control/checkout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          sku: 'pro_monthly',
          email: `${provider}${i}@example.com`,
          target: lost,
          account,
          mode: 'test',
          app_user_id: `${provider}_imp_${i}`,
        }),
      });
      expect(res.status).toBe(200);
    }
  });

  it('every buyer becomes premium with no webhook, each subscription imported once', async () => {
    const sdk = async (user: string) =>
      (await call(api.apiRoot, `/v1/sdk/subscribers/${user}`, t.publishable_key)).body;
    expect((await sdk(`${provider}_imp_0`)).is_premium).toBe(false);
    const started = await call(api.apiUrl, '/imports', t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ provider }),
    });
    expect(started.status).toBe(202);
    const done = await until(
      'the import finished',
      async () => (await call(api.apiUrl, `/imports/${started.body.id}`, t.secret_key)).body,
      (b) => b?.status !== 'running',
      60_000,
    );
    expect(done).toMatchObject({ provider, status: 'succeeded', imported: BUYERS, refused: [] });
    const premium = await until(
      'every buyer premium',
      () => testDb()('entitlements').where({ tenant_id: t.tenant_id, provider, state: 'active' }),
      (rows) => rows.length >= BUYERS,
      60_000,
    );
    expect(new Set(premium.map((e) => e.app_user_id)).size).toBe(BUYERS);
    expect((await sdk(`${provider}_imp_${BUYERS - 1}`)).is_premium).toBe(true);
  });
});
