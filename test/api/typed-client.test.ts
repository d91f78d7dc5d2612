import fs from 'node:fs';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTypes, TYPES_FILE } from '../../scripts/openapi-types';
import type { components, paths } from '../typed-client/openapi';
import { newTenant, startApi } from '../helpers/api';
import { makeProduct } from '../helpers/factories';

/**
 * The OpenAPI document is precise enough for generated clients: types from openapi-typescript
 * (committed, and checked fresh here), calls through openapi-fetch against a real API server.
 * `tsc` typechecks this file, so the typed parameters and responses below are part of the proof.
 */
describe('a client generated from the OpenAPI document', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let productId: string;
  let client: ReturnType<typeof createClient<paths>>;

  beforeAll(async () => {
    api = await startApi();
    const t = await newTenant('typed');
    productId = (
      await makeProduct(t.tenant_id, {
        sku: 'typed_monthly',
        name: 'Typed',
        tier: 'monthly',
        prices: [{ country: 'US', currency: 'USD', amount: 499 }],
      })
    ).id;
    client = createClient<paths>({ baseUrl: api.apiUrl, headers: { Authorization: `Bearer ${t.secret_key}` } });
  });
  afterAll(async () => api.close());

  it('the committed types are what openapi-typescript makes of the current document (npm run openapi:types)', async () => {
    expect(fs.readFileSync(TYPES_FILE, 'utf8')).toBe(await generateTypes());
  });

  it('lists products with a typed limit and reads one by id', async () => {
    const list = await client.GET('/products', { params: { query: { limit: 1, sku: 'typed_monthly' } } });
    expect(list.response.status).toBe(200);
    const page = list.data!;
    const limit: number = page.pagination.limit;
    expect(limit).toBe(1);
    expect(page.data.map((p) => p.id)).toEqual([productId]);

    const one = await client.GET('/products/{id}', { params: { path: { id: productId } } });
    expect(one.response.status).toBe(200);
    const amount: number = one.data!.pricing[0].amount_minor;
    expect(amount).toBe(499);
    expect(one.data!.pricing.map((p) => p.currency)).toEqual(['USD']);
  });

  it('errors come typed as the Error schema', async () => {
    const missing = await client.GET('/products/{id}', {
      params: { path: { id: '00000000-0000-4000-8000-000000000000' } },
    });
    expect(missing.response.status).toBe(404);
    const err: components['schemas']['Error'] | undefined = missing.error;
    expect(err?.error).toBe('not_found');

    // The types refuse a non-integer limit; sent anyway, the server refuses it by name.
    // @ts-expect-error limit is an integer in the document
    const bad = await client.GET('/products', { params: { query: { limit: 'ten' } } });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toMatchObject({ error: 'invalid_request', param: 'limit' });
  });
});
