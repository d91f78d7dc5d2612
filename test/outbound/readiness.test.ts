import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sellOnWebProvider } from '../helpers/connections';
import { newTenant } from '../helpers/api';
import { until } from '../helpers/until';
import { createEndpoint, startOutboundStack } from './fixtures';

/**
 * `readiness.changed` and `sync_run.finished` from a real sync: an endpoint made while psp_a is
 * not connected hears, when the first sync run that puts the product there ends, that psp_a
 * turned test-ready (previous and current verdicts), and the run itself, signed.
 */
describe('outbound webhooks: readiness.changed when a sync run makes a provider ready', () => {
  let s: Awaited<ReturnType<typeof startOutboundStack>>;
  beforeAll(async () => {
    s = await startOutboundStack();
  });
  afterAll(async () => s?.close());

  it('connect, create a product, sync: the endpoint hears the run finished and psp_a turned test-ready', async () => {
    const t = await newTenant('outbound-readiness');
    const ep = await createEndpoint(s.api.apiUrl, t.secret_key, {
      url: s.rx.url,
      event_types: ['readiness.changed', 'sync_run.finished'],
    });
    await sellOnWebProvider({
      emulatorUrl: s.emulators.psp_a.url,
      vault: s.worker.vault,
      apiUrl: s.api.apiUrl,
      tenant: t,
    });
    await until(
      'both events delivered',
      async () => s.rx.received.length,
      (n) => n >= 2,
      30_000,
    );
    const bodies = s.rx.received.map((r) => s.rx.verify(r, ep.secret));
    expect(bodies.map((b: any) => b.type).sort()).toEqual(['readiness.changed', 'sync_run.finished']);
    const readiness = bodies.find((b: any) => b.type === 'readiness.changed');
    const pspA = (side: any) => side.providers.find((p: any) => p.provider === 'psp_a');
    // Before: psp_a not connected (no row) or not ready.
    expect(pspA(readiness.data.previous)?.test_ready ?? false).toBe(false);
    expect(pspA(readiness.data.current)).toMatchObject({ test_ready: true });
    const run = bodies.find((b: any) => b.type === 'sync_run.finished');
    expect(run.data).toMatchObject({ status: expect.any(String), run_id: expect.any(String) });
  });
});
