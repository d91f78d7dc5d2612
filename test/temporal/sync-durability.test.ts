import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { createConnection } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { createVault, generateMasterKey } from '../../vault/vault';
import { dataConverterFor } from '../../temporal/payload-codec';
import { loadConfig, ROOT_DIR } from '../../runtime/config';
import { progressQuery } from '../../workflows/sync-run';
import { testDb } from '../helpers/db';
import { call, newTenant, startApi } from '../helpers/api';

const PRODUCTS = 3;

/**
 * A sync run survives its worker being SIGKILLed mid-run: the worker is a child process this
 * test starts (never a shared one), killed once the run has made progress and started again.
 * The run completes and every emulator holds exactly one object of each kind per product and mode.
 */
describe('a sync run survives SIGKILL of its worker', () => {
  const masterKey = generateMasterKey();
  const taskQueue = `${inject('taskQueuePrefix')}-durable-${crypto.randomBytes(3).toString('hex')}`;
  let emulators: Record<ProviderId, RunningEmulator>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let client: Client;
  let connection: Connection;
  const children = new Set<ChildProcess>();

  function startWorker(): ChildProcess {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATABASE_URL: inject('databaseUrl'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: taskQueue,
      MASTER_KEY: masterKey,
      // The run's workflow bundle: a restarted worker polls again in seconds less.
      WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
    };
    for (const p of PROVIDERS) env[`${p.toUpperCase()}_API_BASE`] = emulators[p].url;
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'temporal/worker-main.ts')], {
      env,
      stdio: 'ignore',
    });
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  }

  const fault = (p: ProviderId, body: unknown) =>
    fetch(`${emulators[p].url}/__control/faults`, {
      method: body ? 'POST' : 'DELETE',
      headers: { 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });

  beforeAll(async () => {
    emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    // The API and this test's client share the worker child's MASTER_KEY, so they read its payloads.
    api = await startApi({
      config: { ...loadConfig({ NODE_ENV: 'test' }), temporalAddress: inject('temporalAddress'), taskQueue, masterKey },
    });
    connection = await Connection.connect({ address: inject('temporalAddress') });
    client = new Client({ connection, namespace: 'default', dataConverter: dataConverterFor(masterKey) });
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await api?.close();
    await connection?.close();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it('completes after a restart, with exactly one object of each kind at every provider', async () => {
    const vault = createVault(masterKey);
    const t = await newTenant('durable');
    await withTenant(testDb(), t.tenant_id, async (trx) => {
      for (const provider of PROVIDERS) {
        const acct = await createEmulatorAccount(emulators[provider].url);
        await createConnection(trx, vault, {
          provider,
          account_ref: acct.account,
          credentials: acct.credentials,
          webhook_secret: acct.webhook_secret || null,
        });
      }
      for (let i = 0; i < PRODUCTS; i++) {
        const [p] = await trx('products')
          .insert({
            tenant_id: t.tenant_id,
            sku: `plan_${i}`,
            name: `Plan ${i}`,
            tier: 'monthly',
            android_store_product_id: `plan-${i}`,
            ios_store_product_id: `com.example.plan${i}`,
          })
          .returning('id');
        await trx('prices').insert({
          tenant_id: t.tenant_id,
          product_id: p.id,
          country: 'US',
          currency: 'USD',
          amount_minor: 999,
        });
      }
    });
    // Slow providers, so the run is still going when its worker dies.
    for (const p of PROVIDERS) await fault(p, { mode: 'latency', ms: 150 });

    let worker = startWorker();
    const report = await call(api.apiUrl, '/sync', t.secret_key);
    expect(report.status).toBe(200);
    const started = await call(api.apiUrl, '/sync', t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ confirm_count: report.body.confirm_count }),
      headers: { prefer: 'respond-async' },
    });
    expect(started.status).toBe(202);
    const handle = client.workflow.getHandle(`sync-${t.tenant_id}-${started.body.run_id}`);

    // Kill as soon as some, but not all, of the work is done.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const progress = await handle.query(progressQuery);
      const done = Object.values(progress).reduce((n, p) => n + p.done, 0);
      const total = Object.values(progress).reduce((n, p) => n + p.total, 0);
      if (done >= 2 && done < total) break;
      expect(done, 'the run finished before the worker could be killed').toBeLessThan(total);
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setImmediate(r));
    }
    const exited = new Promise((r) => worker.once('exit', r));
    worker.kill('SIGKILL');
    await exited;
    expect((await testDb()('sync_runs').where({ id: started.body.run_id }).first()).status).toBe('running');

    worker = startWorker();
    const result = await handle.result();
    for (const p of PROVIDERS) await fault(p, null);
    expect(result).toMatchObject({ ok: true, failed: [], synced: PRODUCTS * (3 * 2 + 2) });
    expect((await testDb()('sync_runs').where({ id: started.body.run_id }).first()).status).toBe('succeeded');

    const state = async (p: ProviderId) => (await fetch(`${emulators[p].url}/__control/state`)).json();
    // Web providers: one product and one price per product and mode, one link (or plan) per product and mode.
    const a = await state('psp_a');
    expect([a.products.length, a.prices.length, a.payment_links.length]).toEqual([
      PRODUCTS * 2,
      PRODUCTS * 2,
      PRODUCTS * 2,
    ]);
    const b = await state('psp_b');
    expect([b.products.length, b.prices.length]).toEqual([PRODUCTS * 2, PRODUCTS * 2]);
    const c = await state('psp_c');
    expect([c.items.length, c.plans.length]).toEqual([PRODUCTS * 2, PRODUCTS * 2]);
    // Stores: one catalogue.
    expect((await state('store_android')).subscriptions.length).toBe(PRODUCTS);
    expect((await state('store_ios')).subscriptions.length).toBe(PRODUCTS);
    const after = await call(api.apiUrl, '/sync', t.secret_key);
    expect(after.body.findings.filter((f: any) => f.automatable)).toEqual([]);
    // A killed worker's activity is retried only after its start-to-close timeout, and a new
    // worker process starts first (on the run's bundle): minutes on a loaded 2-core box, not seconds.
  }, 240_000);
});
