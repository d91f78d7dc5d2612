import crypto from 'node:crypto';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_TABLES, exportFileName } from '../../domain/export-schema';
import { SCOPES, type Scope } from '../../domain/scopes';
import { withTenant } from '../../db/tenant-tx';
import { call, keyWith, newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeEntitlement } from '../helpers/factories';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

/**
 * Exports (docs/exports.md): one file per table, written by the export's workflow, downloaded from
 * the API, read back with an independent Parquet reader (hyparquet, not the DuckDB that wrote them)
 * and compared with the API's own answers; CSV too; one export at a time; cross-tenant 404s; scopes.
 */
describe('exports', () => {
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  const users = [0, 1, 2].map((i) => `export_${i}_${crypto.randomUUID()}`);
  let parquetExport: any;

  const post = (key: string, body: unknown) =>
    call(api.apiUrl, '/exports', key, { method: 'POST', body: JSON.stringify(body) });
  const finished = (key: string, id: string) =>
    until(
      `export ${id} finished`,
      async () => (await call(api.apiUrl, `/exports/${id}`, key)).body,
      (b) => b?.status !== 'running',
      60_000,
    );
  const download = async (key: string, url: string) => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  };
  const parquetRows = async (bytes: Buffer) => {
    const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    return (await parquetReadObjects({ file: ab as ArrayBuffer })) as Array<Record<string, unknown>>;
  };

  beforeAll(async () => {
    worker = await startTestWorker();
    api = await startApi({ config: worker.config });
    t = await newTenant('exports');
    for (const user of users) {
      const e = await makeEntitlement(t.tenant_id, { appUserId: user });
      await withTenant(testDb(), t.tenant_id, (trx) =>
        trx('entitlements').where({ id: e.id }).update({ state: 'grace_period', updated_at: trx.fn.now() }),
      );
    }
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
  });

  it('one export runs at a time; it writes one Parquet file per table that reads back as the data', async () => {
    const [a, b] = await Promise.all([
      post(t.secret_key, { format: 'parquet' }),
      post(t.secret_key, { format: 'parquet' }),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([202, 409]);
    const started = a.status === 202 ? a : b;
    const refused = a.status === 202 ? b : a;
    expect(refused.body).toMatchObject({ error: 'export_running' });
    expect(started.body).toEqual({ id: expect.any(String), status: 'running' });
    parquetExport = await finished(t.secret_key, started.body.id);
    expect(parquetExport).toMatchObject({
      id: started.body.id,
      status: 'succeeded',
      format: 'parquet',
      schema_version: 1,
    });
    expect(parquetExport.files.map((f: any) => f.name)).toEqual(
      EXPORT_TABLES.map((x) => exportFileName(x.name, 'parquet')),
    );

    const files = Object.fromEntries(parquetExport.files.map((f: any) => [f.table, f]));
    const read = async (table: string) => {
      const d = await download(
        t.secret_key,
        api.apiUrl.replace(/\/v1$/, '') + new URL(files[table].url, 'http://x').pathname,
      );
      expect(d.status).toBe(200);
      expect(d.headers.get('content-type')).toBe('application/vnd.apache.parquet');
      expect(crypto.createHash('sha256').update(d.bytes).digest('hex')).toBe(files[table].sha256);
      const rows = await parquetRows(d.bytes);
      expect(rows).toHaveLength(files[table].rows);
      return rows;
    };

    // Events: every recorded event, with its chain fields and body exactly as the events endpoint answers.
    const events = await read('events');
    const dbEvents = await testDb()('outbound_events').where({ tenant_id: t.tenant_id });
    expect(events).toHaveLength(dbEvents.length);
    expect(events.length).toBeGreaterThanOrEqual(9);
    for (const user of users) {
      const api1 = await call(api.apiUrl, `/customers/${user}/events`, t.secret_key);
      const mine = events.filter((e) => e.app_user_id === user).sort((x, y) => Number(x.sequence) - Number(y.sequence));
      expect(mine.map((e) => JSON.parse(e.body as string))).toEqual(api1.body.data);
      expect(mine.map((e) => e.hash)).toEqual(api1.body.data.map((e: any) => e.data.hash));
      expect(mine.map((e) => e.prev_hash)).toEqual(api1.body.data.map((e: any) => e.data.prev_hash));
    }

    // Customers: each chain's head.
    const customers = await read('customers');
    for (const user of users) {
      const api1 = await call(api.apiUrl, `/customers/${user}/events`, t.secret_key);
      const last = api1.body.data.at(-1);
      expect(customers.find((c) => c.app_user_id === user)).toEqual({
        app_user_id: user,
        last_sequence: BigInt(last.data.sequence),
        last_hash: last.data.hash,
      });
    }

    // Entitlements and subscriptions: the API's list, field by field.
    const entitlements = await read('entitlements');
    const listed = await call(api.apiUrl, '/entitlements?limit=200', t.secret_key);
    expect(entitlements.map((e) => e.id).sort()).toEqual(listed.body.data.map((e: any) => e.id).sort());
    for (const e of entitlements) {
      const l = listed.body.data.find((x: any) => x.id === e.id);
      expect([e.app_user_id, e.state, e.provider, e.is_sandbox]).toEqual([
        l.app_user_id,
        l.state,
        l.provider,
        l.is_sandbox,
      ]);
      expect((e.updated_at as Date).toISOString()).toBe(l.updated_at);
    }
    const subscriptions = await read('subscriptions');
    expect(subscriptions.map((s) => s.id).sort()).toEqual(
      (await testDb()('subscriptions').where({ tenant_id: t.tenant_id }).pluck('id')).sort(),
    );
    expect(await read('grants')).toEqual([]);
    expect((await read('subscription_changes')).length).toBeGreaterThanOrEqual(3);
  });

  it('CSV: the same tables, a header and one line per row; since keeps only what changed after it', async () => {
    const started = await post(t.secret_key, { format: 'csv' });
    expect(started.status).toBe(202);
    const done = await finished(t.secret_key, started.body.id);
    expect(done.status).toBe('succeeded');
    const events = done.files.find((f: any) => f.table === 'events');
    const d = await download(t.secret_key, `${api.apiUrl}/exports/${done.id}/files/${events.name}`);
    expect(d.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const text = d.bytes.toString('utf8');
    expect(text.split('\n')[0]).toBe('id,type,app_user_id,chain,sequence,prev_hash,hash,body,created_at');
    expect(events.rows).toBe(parquetExport.files.find((f: any) => f.table === 'events').rows);

    // A change after the watermark: only it is in the incremental export.
    const since = new Date().toISOString();
    const [one] = await testDb()('entitlements').where({ tenant_id: t.tenant_id, app_user_id: users[0] });
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('entitlements').where({ id: one.id }).update({ state: 'expired', updated_at: trx.fn.now() }),
    );
    const inc = await finished(t.secret_key, (await post(t.secret_key, { format: 'parquet', since })).body.id);
    expect(inc).toMatchObject({ status: 'succeeded', since });
    const rowsOf = (table: string) => inc.files.find((f: any) => f.table === table).rows;
    expect(rowsOf('entitlements')).toBe(1);
    expect(rowsOf('events')).toBe(1);
    expect(rowsOf('grants')).toBe(0);
  });

  it('bad input is a 400 naming the field', async () => {
    for (const [body, param] of [
      [{ format: 'xlsx' }, 'format'],
      [{}, 'format'],
      [{ format: 'csv', since: 'yesterday' }, 'since'],
      [{ format: 'csv', extra: 1 }, undefined],
    ] as const) {
      const r = await post(t.secret_key, body);
      expect(r.status).toBe(400);
      if (param) expect(r.body.param).toBe(param);
    }
  });

  it('another tenant sees neither the export nor its files; an unknown id is 404', async () => {
    const other = await newTenant('exports-other');
    const file = parquetExport.files[0];
    expect((await call(api.apiUrl, `/exports/${parquetExport.id}`, other.secret_key)).status).toBe(404);
    expect(
      (await download(other.secret_key, `${api.apiUrl}/exports/${parquetExport.id}/files/${file.name}`)).status,
    ).toBe(404);
    expect((await call(api.apiUrl, `/exports/${crypto.randomUUID()}`, t.secret_key)).status).toBe(404);
    expect((await call(api.apiUrl, '/exports/not-a-uuid', t.secret_key)).status).toBe(404);
    expect((await download(t.secret_key, `${api.apiUrl}/exports/${parquetExport.id}/files/nope.parquet`)).status).toBe(
      404,
    );
  });

  it('scopes: exports:read reads and downloads, exports:write starts; neither does the other; no other scope does either', async () => {
    const reader = (await keyWith(t.tenant_id, ['exports:read'])).secret_key;
    const writer = (await keyWith(t.tenant_id, ['exports:write'])).secret_key;
    const others = (await keyWith(t.tenant_id, SCOPES.filter((s) => !s.startsWith('exports:')) as Scope[])).secret_key;
    const file = parquetExport.files[0];
    expect((await call(api.apiUrl, `/exports/${parquetExport.id}`, reader)).status).toBe(200);
    expect((await download(reader, `${api.apiUrl}/exports/${parquetExport.id}/files/${file.name}`)).status).toBe(200);
    expect((await post(reader, { format: 'csv' })).status).toBe(403);
    expect((await call(api.apiUrl, `/exports/${parquetExport.id}`, writer)).status).toBe(403);
    expect((await download(writer, `${api.apiUrl}/exports/${parquetExport.id}/files/${file.name}`)).status).toBe(403);
    for (const key of [others]) {
      expect((await post(key, { format: 'csv' })).status).toBe(403);
      expect((await call(api.apiUrl, `/exports/${parquetExport.id}`, key)).status).toBe(403);
    }
  });
});
