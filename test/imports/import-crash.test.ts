import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import type { RunningEmulator } from '../../emulators/common/host';
import { startAllEmulators } from '../../emulators/registry';
import { loadConfig, ROOT_DIR } from '../../runtime/config';
import { dataConverterFor } from '../../temporal/payload-codec';
import { importWorkflowId } from '../../temporal/workflow-starts';
import { createVault, generateMasterKey } from '../../vault/vault';
import { importProgressQuery } from '../../workflows/import-run';
import { call, newTenant, startApi } from '../helpers/api';
import { sellOnWebProvider } from '../helpers/connections';
import { testDb } from '../helpers/db';
import { until } from '../helpers/until';

const SUBSCRIPTIONS = 150; // two pages of the provider's list: the worker dies while the second is read

/**
 * An import survives its worker being SIGKILLed mid-import: the worker is a child process this
 * test starts, killed once a page is in and the next is being read (the provider answers
 * slowly), and started again. The import completes, every subscription exactly once.
 */
describe('an import survives SIGKILL of its worker', () => {
  const masterKey = generateMasterKey();
  const taskQueue = `${inject('taskQueuePrefix')}-import-${crypto.randomBytes(3).toString('hex')}`;
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
  const control = async (route: string, body: unknown, method = 'POST') =>
    (
      await fetch(`${emulators.psp_a.url}/__control${route}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === null ? undefined : JSON.stringify(body),
      })
    ).json();

  beforeAll(async () => {
    emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<
      ProviderId,
      string
    >;
    api = await startApi({
      config: {
        ...loadConfig({ NODE_ENV: 'test' }),
        temporalAddress: inject('temporalAddress'),
        taskQueue,
        masterKey,
        providerBaseUrls,
      },
      vault: createVault(masterKey),
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

  it('resumes where it stood and imports every subscription once', async () => {
    let worker = startWorker();
    const t = await newTenant('import-crash');
    const { account } = await sellOnWebProvider({
      provider: 'psp_a',
      emulatorUrl: emulators.psp_a.url,
      vault: createVault(masterKey),
      apiUrl: api.apiUrl,
      tenant: t,
    });
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const lost = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/nowhere`;
    await new Promise<void>((r) => server.close(() => r()));
    // Ten checkouts at a time: the provider holds them all before the import starts.
    for (let from = 0; from < SUBSCRIPTIONS; from += 10)
      await Promise.all(
        Array.from({ length: Math.min(10, SUBSCRIPTIONS - from) }, (_, k) => from + k).map((i) =>
          control('/checkout', {
            sku: 'pro_monthly',
            email: `crash${i}@example.com`,
            target: lost,
            account,
            mode: 'test',
            app_user_id: `crash_${i}`,
          }),
        ),
      );
    // A slow list: the import is still reading when its worker dies.
    await control('/faults', { mode: 'latency', ms: 1500, route: '/v1/subscriptions' });

    const started = await call(api.apiUrl, '/imports', t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ provider: 'psp_a' }),
    });
    expect(started.status).toBe(202);
    const handle = client.workflow.getHandle(importWorkflowId(t.tenant_id, started.body.id));
    const progress = await until(
      'a page in, the import still going',
      () => handle.query(importProgressQuery),
      (p) => p.listed >= 100 || p.done,
      60_000,
    );
    expect(progress.done, 'the import finished before the worker could be killed').toBe(false);
    const exited = new Promise((r) => worker.once('exit', r));
    worker.kill('SIGKILL');
    await exited;
    expect((await testDb()('imports').where({ id: started.body.id }).first()).status).toBe('running');

    worker = startWorker();
    await handle.result();
    await control('/faults', null, 'DELETE');
    const done = (await call(api.apiUrl, `/imports/${started.body.id}`, t.secret_key)).body;
    expect(done).toMatchObject({ status: 'succeeded', imported: SUBSCRIPTIONS, refused: [] });
    const subs = await until(
      'every subscription written',
      () => testDb()('subscriptions').where({ tenant_id: t.tenant_id, provider: 'psp_a' }),
      (rows) => rows.length >= SUBSCRIPTIONS,
      60_000,
    );
    expect(subs).toHaveLength(SUBSCRIPTIONS);
    expect(new Set(subs.map((s) => s.app_user_id)).size).toBe(SUBSCRIPTIONS);
    const active = await testDb()('entitlements').where({ tenant_id: t.tenant_id, state: 'active' }).count('* as n');
    expect(Number(active[0].n)).toBe(SUBSCRIPTIONS);
  }, 240_000);
});
