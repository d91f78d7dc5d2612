// test-tier: engine (exports run as workflows on the worker this file starts; the bucket is SeaweedFS)
import crypto from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpUser } from '../../db/dashboard-users';
import { withTenant } from '../../db/tenant-tx';
import { previousDay } from '../../domain/event-digest';
import type { UserActor } from '../../operations/actor';
import { executeOperation } from '../../operations/execute';
import { saveExportDestination } from '../../operations/export-destination/save';
import { createLogger } from '../../runtime/logger';
import { scheduledExportsWorkflow } from '../../workflows/scheduled-exports';
import { call, keyWith, newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeEntitlement } from '../helpers/factories';
import { startS3Server, weedAvailable, type S3Server } from '../helpers/s3-server';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
const chainOf = (tenantId: string, id: string) => `sub-${sha256(`${tenantId}:${id}`).slice(0, 32)}`;

/**
 * Exports and erasure (docs/exports.md, "Erasures"): the files of exports made before an erasure
 * are deleted and their downloads answer 410; every later export, on demand (`since`) or scheduled
 * to the tenant's bucket, carries an `erasures` file the tenant's warehouse applies to what it
 * holds, and no file written after it holds the erased id.
 */
describe('exports after an erasure', () => {
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;

  const exportOf = async (key: string, body: Record<string, unknown>) => {
    const started = await call(api.apiUrl, '/exports', key, { method: 'POST', body: JSON.stringify(body) });
    expect(started.status).toBe(202);
    const done = await until(
      'export finished',
      async () => (await call(api.apiUrl, `/exports/${started.body.id}`, key)).body,
      (b) => b.status !== 'running',
      90_000,
    );
    expect(done.status).toBe('succeeded');
    return done;
  };
  // A file's `url` names the deployment's public address: this API is the same path on its own port.
  const download = async (key: string, url: string) => {
    const res = await fetch(`${api.apiUrl}${new URL(url).pathname.replace(/^\/v1/, '')}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: res.status, text: Buffer.from(await res.arrayBuffer()).toString('utf8') };
  };
  const fileOf = (done: any, table: string) => done.files.find((f: any) => f.table === table);
  const erase = (key: string, who: string) =>
    call(api.apiUrl, `/customers/${encodeURIComponent(who)}/erase`, key, { method: 'POST' });

  beforeAll(async () => {
    worker = await startTestWorker({ config: { exportDestinations: { allowPrivateAddresses: true } } });
    api = await startApi({ config: worker.config, vault: worker.vault });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
  });

  it('earlier exports are purged (410); a later one with since carries the erasures; another tenant’s are untouched', async () => {
    const t = await newTenant('erasure-exports');
    const other = await newTenant('erasure-exports-other');
    const [gone, stays] = [`gone_${crypto.randomUUID()}`, `stays_${crypto.randomUUID()}`];
    for (const who of [gone, stays]) await makeEntitlement(t.tenant_id, { appUserId: who });
    await makeEntitlement(other.tenant_id, { appUserId: gone });
    const earlier = await exportOf(t.secret_key, { format: 'csv' });
    const theirs = await exportOf(other.secret_key, { format: 'csv' });
    expect((await download(t.secret_key, fileOf(earlier, 'customers').url)).text).toContain(gone);
    const beforeErasure = new Date().toISOString();

    const r = await erase(t.secret_key, gone);
    expect(r.status).toBe(200);

    // The earlier export is still listed, marked; its files are gone and say so.
    const listed = (await call(api.apiUrl, `/exports/${earlier.id}`, t.secret_key)).body;
    expect(listed.purged_at).toEqual(expect.any(String));
    expect(listed.files.map((f: any) => f.name)).toEqual(earlier.files.map((f: any) => f.name));
    for (const f of earlier.files) {
      const res = await download(t.secret_key, f.url);
      expect([f.name, res.status, JSON.parse(res.text).error]).toEqual([f.name, 410, 'export_purged']);
    }
    expect(await testDb()('export_file_parts').where({ export_id: earlier.id })).toEqual([]);
    // Another tenant's export, and its customer of the same id, are not touched.
    expect((await call(api.apiUrl, `/exports/${theirs.id}`, other.secret_key)).body.purged_at).toBeNull();
    expect((await download(other.secret_key, fileOf(theirs, 'customers').url)).text).toContain(gone);
    expect((await call(api.apiUrl, `/exports/${earlier.id}`, other.secret_key)).status).toBe(404);
    expect((await download(other.secret_key, fileOf(earlier, 'customers').url)).status).toBe(404);

    // Since before the erasure: the erasure is in it, and the id nowhere.
    const since = await exportOf(t.secret_key, { format: 'csv', since: beforeErasure });
    const files = Object.fromEntries(
      await Promise.all(since.files.map(async (f: any) => [f.table, (await download(t.secret_key, f.url)).text])),
    );
    const erasures = files.erasures.trim().split('\n');
    expect(erasures[0]).toBe('erased_as,app_user_id_sha256,chain,erased_chain,erased_at');
    const erasedChain = chainOf(t.tenant_id, r.body.erased_as);
    expect(erasures.slice(1).map((line: string) => line.split(',').slice(0, 4))).toEqual([
      [r.body.erased_as, sha256(gone), chainOf(t.tenant_id, gone), erasedChain],
    ]);
    // The erased customer's events are exported on that chain from now on.
    const full = await exportOf(t.secret_key, { format: 'csv' });
    const chains = (await download(t.secret_key, fileOf(full, 'events').url)).text;
    expect(chains).toContain(erasedChain);
    expect(chains).not.toContain(chainOf(t.tenant_id, gone));
    for (const text of Object.values(files)) expect(text).not.toContain(gone);
    expect(files.customers).toContain(r.body.erased_as);
    expect(files.customers).toContain(stays);
    // Since after it: nothing to apply.
    const later = await exportOf(t.secret_key, { format: 'csv', since: new Date().toISOString() });
    expect((await download(t.secret_key, fileOf(later, 'erasures').url)).text.trim().split('\n')).toHaveLength(1);
  });

  describe.skipIf(!weedAvailable())('to the tenant’s bucket', () => {
    let s3: S3Server;
    let reader: S3Client;
    beforeAll(async () => {
      s3 = await startS3Server();
      reader = new S3Client({
        endpoint: s3.endpoint,
        region: s3.region,
        forcePathStyle: true,
        credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
      });
    }, 120_000);
    afterAll(async () => {
      reader?.destroy();
      await s3?.close();
    });
    const object = async (key: string) => {
      const r = await reader.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
      return Buffer.from(await r.Body!.transformToByteArray());
    };

    it('the run after an erasure uploads it in its erasures file, and none of its objects holds the id', async () => {
      const yesterday = previousDay(Date.now());
      const dayBefore = previousDay(Date.now() - 86_400_000);
      const u = await signUpUser(testDb(), {
        email: `sx-erase-${crypto.randomUUID()}@example.com`,
        passwordHash: 'unused: this person never signs in',
      });
      const person: UserActor = { kind: 'user', tenantId: u.tenant_id, userId: u.id, role: 'owner' };
      await executeOperation(
        saveExportDestination,
        person,
        {
          endpoint: s3.endpoint,
          region: s3.region,
          bucket: s3.bucket,
          prefix: `erasure-${u.tenant_id}/`,
          access_key_id: s3.accessKeyId,
          secret_access_key: s3.secretAccessKey,
        },
        { requestId: crypto.randomUUID(), services: api.services, surface: 'dashboard', log: createLogger('silent') },
      );
      const gone = `gone_${crypto.randomUUID()}`;
      const e = await makeEntitlement(u.tenant_id, { appUserId: gone });
      await withTenant(testDb(), u.tenant_id, (trx) =>
        trx('entitlements').where({ id: e.id }).update({ state: 'grace_period' }),
      );
      const at = (day: string) => testDb().raw(`(?::date + time '12:00') at time zone 'UTC'`, [day]);
      await testDb()('outbound_events')
        .where({ tenant_id: u.tenant_id })
        .update({ created_at: at(dayBefore) });
      const tick = (args: { until?: string }) =>
        worker.client.workflow.execute(scheduledExportsWorkflow, {
          taskQueue: worker.taskQueue,
          workflowId: `scheduled-exports-test-${crypto.randomUUID()}`,
          args: [{ ...args, tenants: [u.tenant_id] }],
        });
      const prefix = `erasure-${u.tenant_id}/`;
      await tick({ until: yesterday });
      // Uploaded before the erasure: the tenant's own to apply the erasure to (docs/exports.md).
      expect((await object(`${prefix}000001/customers.v1.parquet`)).includes(Buffer.from(gone))).toBe(true);

      const key = (await keyWith(u.tenant_id, ['customers:erase'])).secret_key;
      const r = await erase(key, gone);
      expect(r.status).toBe(200);
      await testDb()('customer_erasures')
        .where({ tenant_id: u.tenant_id })
        .update({ erased_at: at(yesterday) });
      await tick({});

      const listed = await reader.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${prefix}000002/` }));
      const keys = (listed.Contents ?? []).map((o) => o.Key!).sort();
      expect(keys).toContain(`${prefix}000002/erasures.v1.parquet`);
      const manifest = JSON.parse((await object(`${prefix}000002/manifest.json`)).toString('utf8'));
      expect(manifest.files.find((f: any) => f.table === 'erasures')).toMatchObject({ rows: 1 });
      const bytes = await object(`${prefix}000002/erasures.v1.parquet`);
      const rows = (await parquetReadObjects({
        file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
      })) as any[];
      expect(rows.map((x) => [x.erased_as, x.app_user_id_sha256, x.chain, x.erased_chain])).toEqual([
        [r.body.erased_as, sha256(gone), chainOf(u.tenant_id, gone), chainOf(u.tenant_id, r.body.erased_as)],
      ]);
      for (const k of keys) expect([k, (await object(k)).includes(Buffer.from(gone))]).toEqual([k, false]);
      expect((await object(`${prefix}000002/customers.v1.parquet`)).includes(Buffer.from(r.body.erased_as))).toBe(true);
    }, 180_000);
  });
});
