import { describe, expect, inject, it } from 'vitest';
import { provided } from '../helpers/provided';
import { call, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeTenant } from '../helpers/factories';

/**
 * A database-tier file gets the run's database and nothing of the engine: no Temporal address,
 * task queue or workflow bundle was set up for it (test/engine-setup.ts runs for engine files
 * only), what a worker asks for first is refused naming the tier, and the API runs as it does without
 * TEMPORAL_ADDRESS, so nothing here can reach a Temporal server, the run's or anyone's.
 */
describe('the database tier', () => {
  it('has the database and no Temporal, task queue or workflow bundle', async () => {
    expect((await testDb().raw('select 1 as one')).rows).toEqual([{ one: 1 }]);
    for (const key of ['temporalAddress', 'taskQueuePrefix', 'workflowBundlePath'] as const)
      expect(inject(key), key).toBeUndefined();
    // What a worker, an api process or an engine helper asks first (test/helpers/provided.ts).
    expect(() => provided('temporalAddress')).toThrow(/set up for the engine tier only.*test-tier: engine/);
  });

  it('serves the API without a Temporal client: a read answers, a workflow start says what is missing', async () => {
    const api = await startApi();
    try {
      expect(api.services.temporal).toBeNull();
      const t = await makeTenant('tier-setup');
      const products = await call(api.apiUrl, '/products', t.secret_key);
      expect(products.status).toBe(200);
      const sync = await call(api.apiUrl, '/sync', t.secret_key, {
        method: 'POST',
        body: JSON.stringify({ confirm_count: 0 }),
      });
      expect(sync.body.error).toBeDefined();
      expect(JSON.stringify(sync.body)).toContain('TEMPORAL_ADDRESS');
    } finally {
      await api.close();
    }
  });
});
