// test-tier: engine (scheduled exports run as workflows on a worker this file starts)
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpUser } from '../../db/dashboard-users';
import { withTenant } from '../../db/tenant-tx';
import { previousDay } from '../../domain/event-digest';
import type { UserActor } from '../../operations/actor';
import { executeOperation } from '../../operations/execute';
import { saveExportDestination } from '../../operations/export-destination/save';
import { createLogger } from '../../runtime/logger';
import { scheduledExportsWorkflow, tenantScheduledExportWorkflowId } from '../../workflows/scheduled-exports';
import { startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeEntitlement } from '../helpers/factories';
import { startS3Server, weedAvailable, type S3Server } from '../helpers/s3-server';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

/**
 * Scheduled exports are fair (docs/exports.md, "Scheduled exports to your bucket"): one tick runs
 * each tenant's export as a child workflow of its own, several at once, so a tenant whose export
 * is slow (here its storage holds every request until the test lets it go: a huge upload, a slow
 * store) does not keep a small tenant's export from completing. The slow tenant is the one the
 * tick reaches first. The store is SeaweedFS behind a pass-through proxy that can hold one prefix.
 */
describe.skipIf(!weedAvailable())('scheduled exports: one slow tenant does not hold the others', () => {
  const yesterday = previousDay(Date.now());
  const today = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000).toISOString();
  let s3: S3Server;
  let proxy: http.Server;
  let proxyUrl: string;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  /** Requests for the held prefix, waiting for `release`. */
  const held: Array<() => void> = [];
  let heldPrefix = '';
  let released = false;

  const person = async (name: string): Promise<UserActor> => {
    const u = await signUpUser(testDb(), {
      email: `${name}-${crypto.randomUUID()}@example.com`,
      passwordHash: 'unused: this person never signs in',
    });
    return { kind: 'user', tenantId: u.tenant_id, userId: u.id, role: 'owner' };
  };
  const save = (actor: UserActor, prefix: string) =>
    executeOperation(
      saveExportDestination,
      actor,
      {
        endpoint: proxyUrl,
        region: s3.region,
        bucket: s3.bucket,
        prefix,
        access_key_id: s3.accessKeyId,
        secret_access_key: s3.secretAccessKey,
      },
      { requestId: crypto.randomUUID(), services: api.services, surface: 'dashboard', log: createLogger('silent') },
    );
  const eventsYesterday = async (tenantId: string, n: number) => {
    for (let i = 0; i < n; i++) {
      const e = await makeEntitlement(tenantId, { appUserId: `fair_${i}_${crypto.randomUUID()}` });
      await withTenant(testDb(), tenantId, (trx) =>
        trx('entitlements').where({ id: e.id }).update({ state: 'grace_period' }),
      );
    }
    await testDb()('outbound_events')
      .where({ tenant_id: tenantId })
      .where('created_at', '>=', today)
      .update({ created_at: testDb().raw(`(?::date + time '12:00') at time zone 'UTC'`, [yesterday]) });
  };
  const runOf = async (tenantId: string) =>
    (await testDb()('export_destination_runs').where({ tenant_id: tenantId }).orderBy('seq')).at(-1);

  beforeAll(async () => {
    s3 = await startS3Server();
    const upstream = new URL(s3.endpoint);
    // Passes every request through to the store unchanged (the signature covers the Host it names), holding
    // the slow tenant's until released.
    proxy = http.createServer((req, res) => {
      const forward = () => {
        const up = http.request(
          { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode!, answer.headers);
            answer.pipe(res);
          },
        );
        up.on('error', () => res.destroy());
        req.pipe(up);
      };
      if (!released && heldPrefix && req.url?.includes(`/${heldPrefix}`)) held.push(forward);
      else forward();
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    worker = await startTestWorker({ config: { exportDestinations: { allowPrivateAddresses: true } } });
    api = await startApi({ config: worker.config, vault: worker.vault });
  }, 120_000);
  afterAll(async () => {
    released = true;
    for (const go of held.splice(0)) go();
    await api?.close();
    await worker?.stop();
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    await s3?.close();
  });

  it('a small tenant’s export completes while a large one’s is still running; each runs as its own child workflow', async () => {
    const [slow, small] = (await Promise.all([person('fair-a'), person('fair-b')])).sort((x, y) =>
      x.tenantId < y.tenantId ? -1 : 1,
    );
    heldPrefix = `fair-slow-${crypto.randomUUID()}/`;
    await save(slow, heldPrefix);
    await save(small, `fair-small-${crypto.randomUUID()}/`);
    await eventsYesterday(slow.tenantId, 3);
    await eventsYesterday(small.tenantId, 1);

    // One tick for these two (other files' tenants are theirs to run), the slow one first by id.
    const tick = await worker.client.workflow.start(scheduledExportsWorkflow, {
      taskQueue: worker.taskQueue,
      workflowId: `scheduled-exports-test-${crypto.randomUUID()}`,
      args: [{ tenants: [slow.tenantId, small.tenantId] }],
    });
    await until(
      'the slow tenant’s upload is being held',
      async () => held.length,
      (n) => n > 0,
      60_000,
    );
    const smallRun = await until(
      'the small tenant’s export completes',
      () => runOf(small.tenantId),
      (r) => r?.status === 'succeeded',
      60_000,
    );
    expect(smallRun.status).toBe('succeeded');
    // Meanwhile the slow one is still at its first object, running.
    expect((await runOf(slow.tenantId)).status).toBe('running');
    const child = await worker.client.workflow.getHandle(tenantScheduledExportWorkflowId(slow.tenantId)).describe();
    expect(child.status.name).toBe('RUNNING');
    expect(child.typedSearchAttributes.getAll().map((p) => p.value)).toContain(slow.tenantId);

    released = true;
    for (const go of held.splice(0)) go();
    expect(await tick.result()).toEqual({ runs: 2 });
    expect((await runOf(slow.tenantId)).status).toBe('succeeded');
  }, 180_000);
  it('a tick stops waiting at its time: the slow export goes on alone, and the next tick runs everyone else', async () => {
    released = false;
    const [slow, small] = (await Promise.all([person('late-a'), person('late-b')])).sort((x, y) =>
      x.tenantId < y.tenantId ? -1 : 1,
    );
    heldPrefix = `late-slow-${crypto.randomUUID()}/`;
    await save(slow, heldPrefix);
    await save(small, `late-small-${crypto.randomUUID()}/`);
    await eventsYesterday(slow.tenantId, 2);
    await eventsYesterday(small.tenantId, 1);
    const tick = (waitMs: number) =>
      worker.client.workflow.execute(scheduledExportsWorkflow, {
        taskQueue: worker.taskQueue,
        workflowId: `scheduled-exports-test-${crypto.randomUUID()}`,
        // One place, so the slow tenant (first by id) holds it; a wait of seconds stands for the tick's hours.
        args: [{ tenants: [slow.tenantId, small.tenantId], atOnce: 1, waitMs }],
      });
    // The first tick's time runs out while the slow export holds its one place: it ends, the small tenant not reached.
    expect(await tick(3_000)).toEqual({ runs: 0 });
    await until(
      'the slow tenant’s upload is being held',
      async () => held.length,
      (n) => n > 0,
      60_000,
    );
    expect(await runOf(small.tenantId)).toBeUndefined();
    const child = worker.client.workflow.getHandle(tenantScheduledExportWorkflowId(slow.tenantId));
    expect((await child.describe()).status.name).toBe('RUNNING');
    // The next tick skips the tenant whose export still runs and exports the other.
    expect(await tick(60_000)).toEqual({ runs: 1 });
    expect((await runOf(small.tenantId)).status).toBe('succeeded');
    expect((await runOf(slow.tenantId)).status).toBe('running');

    released = true;
    for (const go of held.splice(0)) go();
    expect(await child.result()).toEqual({ ran: true });
    expect((await runOf(slow.tenantId)).status).toBe('succeeded');
  }, 180_000);
});
