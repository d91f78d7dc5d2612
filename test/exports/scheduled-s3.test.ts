// test-tier: engine (scheduled exports run as workflows on workers this file starts)
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { signUpUser } from '../../db/dashboard-users';
import { beginRun } from '../../db/export-destinations';
import { withTenant } from '../../db/tenant-tx';
import { uploadRunTable } from '../../activities/export-destinations';
import { previousDay } from '../../domain/event-digest';
import { SCOPES } from '../../domain/scopes';
import { digestRoot, headsOfDay } from '../../examples/receiver/digest';
import type { Actor, UserActor } from '../../operations/actor';
import { ApiError } from '../../operations/errors';
import { executeOperation } from '../../operations/execute';
import { saveExportDestination } from '../../operations/export-destination/save';
import type { Services } from '../../operations/services';
import { ROOT_DIR } from '../../runtime/config';
import { createLogger } from '../../runtime/logger';
import { scheduledExportScheduleId, ensureScheduledExportSchedule } from '../../temporal/scheduled-export-schedule';
import { scheduledExportsWorkflow } from '../../workflows/scheduled-exports';
import { call, keyWith, startApi } from '../helpers/api';
import { appDb, testDb } from '../helpers/db';
import { makeEntitlement } from '../helpers/factories';
import { startS3Server, weedAvailable, type S3Server } from '../helpers/s3-server';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

/**
 * Scheduled exports to S3-compatible storage (docs/exports.md, "Scheduled exports to your bucket"),
 * against SeaweedFS (`weed mini`, built into the tools cache by .ci/run): the destination is set by
 * a person only; runs cover whole days, each row once across runs, retries and a worker killed
 * mid-run; the manifest equals the signed digests, and a run whose export disagrees stops loudly;
 * tenants see only their own; the address guard refuses a private endpoint unless the deployment
 * allows it (this file's workers do, as a deployment with its store on its own network would).
 */
describe.skipIf(!weedAvailable())('scheduled exports to S3-compatible storage', () => {
  const yesterday = previousDay(Date.now());
  const dayBefore = previousDay(Date.now() - 86_400_000);
  const today = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000).toISOString();
  let s3: S3Server;
  let reader: S3Client;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let services: Services;
  const children = new Set<ChildProcess>();

  const person = async (name: string): Promise<UserActor> => {
    const u = await signUpUser(testDb(), {
      email: `${name}-${crypto.randomUUID()}@example.com`,
      passwordHash: 'unused: this person never signs in',
    });
    mine.push(u.tenant_id);
    return { kind: 'user', tenantId: u.tenant_id, userId: u.id, role: 'owner' };
  };
  const run = (op: typeof saveExportDestination, actor: Actor, input: Record<string, unknown>) =>
    executeOperation(op, actor, input, {
      requestId: crypto.randomUUID(),
      services,
      surface: 'dashboard',
      log: createLogger('silent'),
    });
  const save = (actor: UserActor, prefix: string, extra: Record<string, unknown> = {}) =>
    run(saveExportDestination, actor, {
      endpoint: s3.endpoint,
      region: s3.region,
      bucket: s3.bucket,
      prefix,
      access_key_id: s3.accessKeyId,
      secret_access_key: s3.secretAccessKey,
      ...extra,
    });
  /** Events about `n` new app users, recorded on `day` (the rows are moved there, as the digest tests do). */
  const eventsOn = async (tenantId: string, n: number, day: string) => {
    for (let i = 0; i < n; i++) {
      const e = await makeEntitlement(tenantId, { appUserId: `sx_${i}_${crypto.randomUUID()}` });
      await withTenant(testDb(), tenantId, (trx) =>
        trx('entitlements').where({ id: e.id }).update({ state: 'grace_period' }),
      );
    }
    await testDb()('outbound_events')
      .where({ tenant_id: tenantId })
      .where('created_at', '>=', today)
      .update({ created_at: testDb().raw(`(?::date + time '12:00') at time zone 'UTC'`, [day]) });
  };
  const keys = async (prefix: string) =>
    ((await reader.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }))).Contents ?? [])
      .map((o) => o.Key!)
      .sort();
  const object = async (key: string) => {
    const r = await reader.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    return Buffer.from(await r.Body!.transformToByteArray());
  };
  const parquetRows = async (key: string) => {
    const b = await object(key);
    return (await parquetReadObjects({
      file: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer,
    })) as any[];
  };
  const eventIds = async (tenantId: string, from: string | null, to: string) =>
    (
      await testDb()('outbound_events')
        .where({ tenant_id: tenantId })
        .where('created_at', '<', to)
        .modify((q) => (from ? q.where('created_at', '>=', from) : q))
        .select('id')
    )
      .map((r: { id: string }) => String(r.id))
      .sort();
  const runsOf = (tenantId: string) =>
    testDb()('export_destination_runs').where({ tenant_id: tenantId }).orderBy('seq');
  /** This file's tenants: other files' destinations in the run's database are theirs to run. */
  const mine: string[] = [];
  const tick = (args: { until?: string } = {}, taskQueue = worker.taskQueue) =>
    worker.client.workflow.execute(scheduledExportsWorkflow, {
      taskQueue,
      workflowId: `scheduled-exports-test-${crypto.randomUUID()}`,
      args: [{ ...args, tenants: mine }],
    });

  beforeAll(async () => {
    s3 = await startS3Server();
    reader = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    worker = await startTestWorker({ config: { exportDestinations: { allowPrivateAddresses: true } } });
    api = await startApi({ config: worker.config, vault: worker.vault });
    services = api.services;
  }, 120_000);
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await worker?.client.schedule
      .getHandle(scheduledExportScheduleId(worker.config.taskQueue))
      .delete()
      .catch(() => undefined);
    await api?.close();
    await worker?.stop();
    reader?.destroy();
    await s3?.close();
  });

  let a: UserActor;
  let b: UserActor;

  it('only a person sets the destination; its credentials are sealed and never answered', async () => {
    a = await person('sx-a');
    b = await person('sx-b');
    const key = (await keyWith(a.tenantId, [...SCOPES])).secret_key;
    // No route and no tool writes it; a key, even one with every scope, is refused by the operation itself.
    for (const method of ['POST', 'PATCH', 'PUT'])
      expect((await call(api.apiUrl, '/settings/exports', key, { method, body: '{}' })).status).not.toBeLessThan(400);
    const everyScope: Actor = {
      kind: 'api_key',
      tenantId: a.tenantId,
      keyId: crypto.randomUUID(),
      keyName: 'every scope',
      scopes: [...SCOPES],
      expiresAt: null,
    };
    const keyActor = await run(saveExportDestination, everyScope, { endpoint: s3.endpoint }).catch((e: ApiError) => e);
    expect(keyActor).toBeInstanceOf(ApiError);
    expect((keyActor as ApiError).status).toBe(403);

    for (const [field, bad] of [
      ['endpoint', { endpoint: `${s3.endpoint}/some/path` }],
      ['endpoint', { endpoint: 'ftp://storage.example' }],
      ['bucket', { bucket: 'No_Such..Bucket' }],
      ['prefix', { prefix: 'a/../b' }],
      ['secret_access_key', { secret_access_key: '' }],
    ] as const) {
      const e = (await save(a, 'a/', bad).catch((x: ApiError) => x)) as ApiError;
      expect([field, e.status, e.extra.param]).toEqual([field, 400, field]);
    }
    expect(await testDb()('export_destinations').where({ tenant_id: a.tenantId })).toHaveLength(0);

    await save(a, 'tenant-a');
    await save(b, 'tenant-b/');
    const shown = await call(api.apiUrl, '/settings/exports', key);
    expect(shown.status).toBe(200);
    expect(shown.body.destination).toMatchObject({ bucket: s3.bucket, prefix: 'tenant-a/', status: 'active' });
    const row = await testDb()('export_destinations').where({ tenant_id: a.tenantId }).first();
    // The save is audited under the person, with neither credential in the row.
    const audited = await testDb()('audit_entries').where({ tenant_id: a.tenantId, action: 'export_destination.save' });
    expect(audited.map((x) => x.outcome)).toContain('ok');
    for (const secret of [s3.secretAccessKey, s3.accessKeyId]) {
      expect(JSON.stringify(shown.body)).not.toContain(secret);
      expect(JSON.stringify(row)).not.toContain(secret);
      expect(JSON.stringify(audited)).not.toContain(secret);
    }
    // Kept: saving without credentials keeps the sealed ones.
    await save(a, 'tenant-a/', { access_key_id: undefined, secret_access_key: undefined });
    const kept = await testDb()('export_destinations').where({ tenant_id: a.tenantId }).first();
    expect(kept.credentials_sealed).toBe(row.credentials_sealed);
  });

  it(
    'runs cover whole days: each row once across runs, and each manifest equals the day’s signed digest',
    { timeout: 180_000 },
    async () => {
      await eventsOn(a.tenantId, 2, dayBefore);
      await eventsOn(a.tenantId, 3, yesterday);
      await eventsOn(b.tenantId, 1, yesterday);

      // Catching up in steps: the first run ends at yesterday's start, the Schedule's next at today's.
      await tick({ until: yesterday });
      expect(await ensureScheduledExportSchedule(worker.client, worker.taskQueue)).toBe('created');
      await worker.client.schedule.getHandle(scheduledExportScheduleId(worker.taskQueue)).trigger();
      for (const t of [a, b])
        await until(
          'the second runs succeeded',
          () => runsOf(t.tenantId),
          (r) => r.length === 2 && r[1].status === 'succeeded',
          // The Schedule's run is the deployment's: another file's destination may be tried first.
          120_000,
        );
      const runs = await runsOf(a.tenantId);
      expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
      expect((await keys('tenant-a/')).filter((k) => k.endsWith('manifest.json'))).toEqual([
        'tenant-a/000001/manifest.json',
        'tenant-a/000002/manifest.json',
      ]);

      const all: string[] = [];
      for (const [i, r] of runs.entries()) {
        const folder = `tenant-a/00000${i + 1}/`;
        const manifest = JSON.parse((await object(`${folder}manifest.json`)).toString('utf8'));
        expect(manifest).toMatchObject({ tenant_id: a.tenantId, run: i + 1, format: 'parquet', schema_version: 1 });
        expect(manifest.window.end).toBe((r.window_end as Date).toISOString());
        const events = await parquetRows(`${folder}events.v1.parquet`);
        expect(events).toHaveLength(manifest.files.find((f: any) => f.table === 'events').rows);
        // The rows in the object are the database's in the window, no more and no fewer.
        const start = r.window_start ? (r.window_start as Date).toISOString() : null;
        expect(events.map((e) => e.id).sort()).toEqual(await eventIds(a.tenantId, start, manifest.window.end));
        all.push(...events.map((e) => e.id));
        // Every file the manifest names is there, with its bytes' hash.
        for (const f of manifest.files) {
          const bytes = await object(f.key);
          expect([f.key, crypto.createHash('sha256').update(bytes).digest('hex')]).toEqual([f.key, f.sha256]);
        }
        // Per day: the manifest, the signed digest and an independent recount of the file agree.
        const day = i === 0 ? dayBefore : yesterday;
        const digest = (
          await call(api.apiUrl, `/digests/${day}`, (await keyWith(a.tenantId, ['exports:read'])).secret_key)
        ).body;
        const own = headsOfDay(events, day);
        expect(manifest.days).toEqual([
          { date: day, events: digest.events, chains: own.heads.length, root: digest.root },
        ]);
        expect([own.events, digestRoot(own.heads)]).toEqual([digest.events, digest.root]);
        expect(digest.events).toBeGreaterThan(0);
      }
      expect(new Set(all).size).toBe(all.length);
      expect(all.sort()).toEqual(await eventIds(a.tenantId, null, today));

      // Nothing is due until a day ends: another tick makes no run.
      await tick();
      expect(await runsOf(a.tenantId)).toHaveLength(2);

      // Tenant B's objects are its own: none of A's events, and B's settings show none of A's runs.
      const bEvents = [
        ...(await parquetRows('tenant-b/000001/events.v1.parquet')),
        ...(await parquetRows('tenant-b/000002/events.v1.parquet')),
      ];
      expect(bEvents.map((e) => e.id).sort()).toEqual(await eventIds(b.tenantId, null, today));
      const bKey = (await keyWith(b.tenantId, ['exports:read'])).secret_key;
      const bShown = (await call(api.apiUrl, '/settings/exports', bKey)).body;
      expect(bShown.runs.map((r: any) => r.run)).toEqual([2, 1]);
      expect(bShown.destination.prefix).toBe('tenant-b/');
    },
  );

  it('a worker killed mid-run: the run resumes on another, every row once, the same object keys', async () => {
    const c = await person('sx-crash');
    await eventsOn(c.tenantId, 4, yesterday);
    await save(c, 'crash/');
    const taskQueue = `${inject('taskQueuePrefix')}-sx-crash-${crypto.randomBytes(3).toString('hex')}`;
    const startWorker = () => {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'temporal/worker-main.ts')], {
        env: {
          ...process.env,
          NODE_ENV: 'test',
          LOG_LEVEL: 'silent',
          DATABASE_URL: inject('databaseUrl'),
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          TEMPORAL_TASK_QUEUE: taskQueue,
          MASTER_KEY: worker.config.masterKey,
          WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
          EXPORT_DESTINATIONS_ALLOW_PRIVATE_ADDRESSES: '1',
        },
        stdio: 'ignore',
      });
      children.add(child);
      child.once('exit', () => children.delete(child));
      return child;
    };
    const first = startWorker();
    const handle = await worker.client.workflow.start(scheduledExportsWorkflow, {
      taskQueue,
      workflowId: `scheduled-exports-crash-${crypto.randomUUID()}`,
      args: [{ tenants: [c.tenantId] }],
    });
    // Two tables are in the bucket with their watermarks moved; then the store stops answering (the
    // next upload hangs where it is) and the worker is killed.
    await until(
      'two tables committed',
      () => testDb()('export_watermarks').where({ tenant_id: c.tenantId }),
      (w) => w.length >= 2,
      90_000,
    );
    s3.process.kill('SIGSTOP');
    const [open] = await runsOf(c.tenantId);
    expect(open.status, 'the run finished before the worker could be killed').toBe('running');
    const exited = new Promise((r) => first.once('exit', r));
    first.kill('SIGKILL');
    await exited;
    s3.process.kill('SIGCONT');

    startWorker();
    await handle.result();
    const [done] = await runsOf(c.tenantId);
    expect(done.status).toBe('succeeded');
    const manifest = JSON.parse((await object('crash/000001/manifest.json')).toString('utf8'));
    expect((await keys('crash/')).length).toBe(manifest.files.length + 1);
    const events = await parquetRows('crash/000001/events.v1.parquet');
    const ids = events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(await eventIds(c.tenantId, null, today));
    for (const f of manifest.files) expect([f.table, (await parquetRows(f.key)).length]).toEqual([f.table, f.rows]);
  }, 240_000);

  it('a run whose export disagrees with the signed digest fails loudly: the destination stops, no manifest', async () => {
    const d = await person('sx-mismatch');
    await eventsOn(d.tenantId, 2, yesterday);
    // A digest that says otherwise (what a lost or extra row would look like against a true one).
    await testDb()('event_digests').insert({
      tenant_id: d.tenantId,
      day: yesterday,
      events: 999,
      chains: 2,
      root: '0'.repeat(64),
      signature: 'not checked here',
    });
    await save(d, 'mismatch/');
    await tick();
    const [r] = await runsOf(d.tenantId);
    expect(r.status).toBe('failed');
    expect(r.error).toMatch(/does not match the signed digests.*999/);
    const shown = (
      await call(api.apiUrl, '/settings/exports', (await keyWith(d.tenantId, ['exports:read'])).secret_key)
    ).body;
    expect(shown.destination).toMatchObject({ status: 'stopped' });
    expect(shown.destination.last_error).toMatch(/digest/);
    expect(shown.runs[0]).toMatchObject({ run: 1, status: 'failed' });
    expect(await keys('mismatch/')).not.toContain('mismatch/000001/manifest.json');
    expect(await testDb()('export_watermarks').where({ tenant_id: d.tenantId, table_name: 'events' })).toHaveLength(0);
    // Stopped: a tick leaves it alone; saved again, the same run (same window and keys) is open again.
    await tick();
    expect(await runsOf(d.tenantId)).toHaveLength(1);
    await save(d, 'mismatch/');
    expect((await runsOf(d.tenantId)).map((x) => x.status)).toEqual(['running']);
    await testDb()('export_destinations').where({ tenant_id: d.tenantId }).delete();
  });

  it('a storage that refuses the key: each tick records it on the run, and the third stops the destination', async () => {
    const f = await person('sx-refused');
    await eventsOn(f.tenantId, 1, yesterday);
    await save(f, 'refused/', { secret_access_key: 'not the secret' });
    const destination = () => testDb()('export_destinations').where({ tenant_id: f.tenantId }).first();
    for (const n of [1, 2, 3]) {
      await tick();
      expect([n, (await destination()).failures]).toEqual([n, n]);
    }
    const d = await destination();
    expect(d).toMatchObject({ status: 'stopped' });
    // Our words: the status and the storage's error name, never its answer's text.
    expect(d.last_error).toMatch(/^The storage refused the upload \(HTTP 403, \w+\)\.$/);
    expect((await runsOf(f.tenantId)).map((r) => r.status)).toEqual(['failed']);
    expect(await keys('refused/')).toEqual([]);
    await testDb()('export_destinations').where({ tenant_id: f.tenantId }).delete();
  });

  it('the address guard refuses a private endpoint unless the deployment allows it; a run is its tenant’s', async () => {
    const e = await person('sx-guard');
    await eventsOn(e.tenantId, 1, yesterday);
    await save(e, 'guard/');
    const runRow = await withTenant(appDb(), e.tenantId, (trx) => beginRun(trx, e.tenantId, today));
    const input = { tenantId: e.tenantId, runId: runRow!.id as string, table: 'events' };
    await expect(uploadRunTable(appDb(), worker.vault, false, input, () => undefined)).rejects.toThrow(
      /private, loopback, link-local or reserved/,
    );
    expect(await keys('guard/')).toEqual([]);
    // Another tenant naming this run finds nothing.
    await expect(
      uploadRunTable(appDb(), worker.vault, true, { ...input, tenantId: b.tenantId }, () => undefined),
    ).rejects.toThrow(/not open/);
    // Allowed (this deployment's store is on its own network): the same call uploads.
    const uploaded = await uploadRunTable(appDb(), worker.vault, true, input, () => undefined);
    expect(uploaded.rows).toBe((await eventIds(e.tenantId, null, today)).length);
    expect(await keys('guard/')).toEqual(['guard/000001/events.v1.parquet']);
    await testDb()('export_destinations').where({ tenant_id: e.tenantId }).delete();
  });
});
