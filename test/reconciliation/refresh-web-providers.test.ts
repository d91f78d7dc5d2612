import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ProviderId } from '../../domain/providers';
import type { RunningEmulator } from '../../emulators/common/host';
import { call, newTenant, startApi } from '../helpers/api';
import { sellOnWebProvider } from '../helpers/connections';
import { startTestWorker } from '../helpers/temporal';
import { useEmulatorStack } from '../helpers/emulator-stack';
import { until } from '../helpers/until';
import { confirmedPremium } from '../helpers/premium';

/**
 * psp_b (Paddle `GET /subscriptions/{id}`) and psp_c (Razorpay `GET /v1/subscriptions/{id}`): a
 * purchase whose every notification was lost is found by the refresh, and once held, re-read
 * with the provider's get-one call finds nothing more to repair.
 */
describe.each([['psp_b'], ['psp_c']] as const)('refresh at %s', (provider) => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  // The five emulators, a worker calling them and the listeners, closed after the file.
  const stack = useEmulatorStack();
  let t: Awaited<ReturnType<typeof newTenant>>;
  const user = `${provider}_rec_1`;

  beforeAll(async () => {
    ({ emulators, worker, api } = stack);
    t = await newTenant(`refresh-${provider}`);
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
    const res = await fetch(`${emulators[provider].url}/__control/checkout`, {
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
    expect(res.status).toBe(200);
  });

  it('not premium → refresh → premium; a second refresh (the get-one read) repairs nothing', async () => {
    const sdk = async () => (await call(api.apiRoot, `/v1/sdk/subscribers/${user}`, t.publishable_key)).body;
    const refresh = () => call(api.apiUrl, `/customers/${user}/refresh`, t.secret_key, { method: 'POST' });
    expect((await sdk()).is_premium).toBe(false);
    const first = await refresh();
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      providers: [provider],
      compared: 1,
      repairs: [{ provider, held: null, provider_state: { status: expect.stringMatching(/^(active|trialing)$/) } }],
    });
    await until(
      `${user} premium`,
      () => sdk(),
      (b) => confirmedPremium(b),
    );
    const second = await refresh();
    expect(second.body).toMatchObject({ compared: 1, repairs: [] });
    const listed = await call(api.apiUrl, `/reconciliations?provider=${provider}`, t.secret_key);
    expect(listed.body.data.map((r: { run_id: string }) => r.run_id)).toEqual([first.body.run_id]);
  });
});
