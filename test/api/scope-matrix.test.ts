import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../domain/scopes';
import { ENDPOINT_SCOPES, OPERATIONS } from '../../api/operations';
import { seedDemoTenant } from '../../seed/demo';
import { testDb } from '../helpers/db';
import { assertMatchesOpenApi, call, keyWith, newTenant, refill, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';

const restOps = OPERATIONS.filter((o) => o.rest);

describe('scope matrix', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let productId: string;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  beforeAll(async () => {
    // Sync operations run workflows: a worker of the file's own serves them.
    worker = await startTestWorker();
    api = await startApi({ config: worker.config });
    t = await newTenant('scopes');
    await seedDemoTenant(testDb(), t.tenant_id);
    productId = (await testDb()('products').where({ tenant_id: t.tenant_id }).first('id')).id;
  });
  afterAll(async () => {
    await api.close();
    await worker.stop();
  });

  it('the operation table demands exactly the spec’s scope for every endpoint it serves', () => {
    for (const op of restOps) {
      const key = `${op.rest!.method} ${op.rest!.path}`;
      expect([key, ENDPOINT_SCOPES[key]]).toEqual([key, op.scope]);
    }
    expect(new Set(restOps.map((o) => `${o.rest!.method} ${o.rest!.path}`)).size).toBe(restOps.length);
  });

  for (const op of restOps) {
    const path = op.rest!.path.replace('{id}', '__ID__');
    it(`${op.rest!.method} ${op.rest!.path}: only-its-scope → 200, every-other-scope → 403`, async () => {
      const p = path.replace('__ID__', productId);
      const only = await keyWith(t.tenant_id, [op.scope]);
      const allBut = await keyWith(t.tenant_id, SCOPES.filter((s) => s !== op.scope) as Scope[]);
      for (const base of [api.apiUrl, api.altUrl]) {
        // POST /sync confirms the count the report shows now (the gate itself is tested in sync.test.ts).
        const body = op.name === 'sync.run' ? JSON.stringify({ confirm_count: (await call(base, '/sync', t.secret_key)).body.confirm_count }) : undefined;
        const ok = await call(base, p, only.secret_key, { method: op.rest!.method, body });
        expect(ok.status).toBe(200);
        assertMatchesOpenApi(op.rest!.method, op.rest!.path, ok);
        const no = await call(base, p, allBut.secret_key, { method: op.rest!.method, body });
        expect(no.status).toBe(403);
        expect(no.body).toMatchObject({ error: 'insufficient_scope' });
        expect(no.body.detail).toContain(op.scope);
      }
      await refill(t.tenant_id);
    });
  }
});
