import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sellOnPspA } from '../helpers/connections';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { createAdapters } from '../../providers';
import { newTenant, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { createEndpoint, outboundConfig } from './fixtures';
import { startReceiver, type TestReceiver } from './receiver';

/**
 * `readiness.changed` and `sync_run.finished` from a real sync: an endpoint made while psp_a is
 * not connected hears, when the first sync run that puts the product there ends, that psp_a
 * turned test-ready (previous and current verdicts), and the run itself, signed.
 */
describe('outbound webhooks: readiness.changed when a sync run makes a provider ready', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let rx: TestReceiver;

  beforeAll(async () => {
    emulators = await startAllEmulators({ emulatorPorts: {} as never, dataDir: '' }, { persistent: false, anyPort: true });
    const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<ProviderId, string>;
    worker = await startTestWorker({ config: { providerBaseUrls, ...outboundConfig() } });
    api = await startApi({ config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    await rx?.close();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it('connect, create a product, sync: the endpoint hears the run finished and psp_a turned test-ready', async () => {
    const t = await newTenant('outbound-readiness');
    const ep = await createEndpoint(api.apiUrl, t.secret_key, { url: rx.url, event_types: ['readiness.changed', 'sync_run.finished'] });
    await sellOnPspA({ emulatorUrl: emulators.psp_a.url, vault: worker.vault, apiUrl: api.apiUrl, tenant: t });
    await until('both events delivered', async () => rx.received.length, (n) => n >= 2, 30_000);
    const bodies = rx.received.map((r) => rx.verify(r, ep.secret));
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
