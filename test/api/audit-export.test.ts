import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../domain/scopes';
import { call, keyWith, newTenant, startApi } from '../helpers/api';

/** Splits the export's CRLF lines into cells (no cell in these rows but `detail` is quoted). */
const rowsOf = (csv: string) =>
  csv
    .split('\r\n')
    .filter(Boolean)
    .map((l) => l.split(',')[0]);

describe('GET /v1/audit.csv: the audit trail as a spreadsheet opens it', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  beforeAll(async () => {
    api = await startApi();
    t = await newTenant('audit-csv');
    const writer = await keyWith(t.tenant_id, ['products:write']);
    for (const sku of ['csv_a', 'csv_b', 'csv_c'])
      expect(
        (await call(api.apiUrl, '/products', writer.secret_key, { method: 'POST', body: JSON.stringify({ sku }) }))
          .status,
      ).toBe(200);
  });
  afterAll(async () => {
    await api.close();
  });

  it('answers text/csv: a header, then the list’s entries in its order, with the same filters and paging', async () => {
    const reader = await keyWith(t.tenant_id, ['audit:read']);
    const json = await call(api.apiUrl, '/audit?action=products.create&limit=2', reader.secret_key);
    const csv = await call(api.apiUrl, '/audit.csv?action=products.create&limit=2', reader.secret_key);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('audit-has-more')).toBe('true');
    const lines = rowsOf(csv.body as string);
    expect(lines[0]).toBe('id');
    expect(lines.slice(1)).toEqual(json.body.data.map((e: { id: string }) => e.id));
    expect(lines).toHaveLength(3);
    expect(csv.body).toContain(',products.create,api_key,');
    const rest = await call(api.apiUrl, '/audit.csv?action=products.create&limit=2&offset=2', reader.secret_key);
    expect(rest.headers.get('audit-has-more')).toBe('false');
    expect(rowsOf(rest.body as string)).toHaveLength(2);
  });

  it('needs audit:read, like the list', async () => {
    const without = await keyWith(t.tenant_id, SCOPES.filter((s) => s !== 'audit:read') as Scope[]);
    const r = await call(api.apiUrl, '/audit.csv', without.secret_key);
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: 'insufficient_scope' });
  });
});
