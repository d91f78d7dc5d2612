import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createApiApp } from '../../api/apps';
import { createHttpServer } from '../../api/http-server';
import { createKnex, withDatabase } from '../../db/knex';
import { migrateLatest } from '../../db/migrate';
import { createTenant } from '../../db/tenants';
import { createConnection } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import { PROVIDERS, type Mode, type ProviderId } from '../../domain/providers';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { createAdapters } from '../../providers';
import { createVault, generateMasterKey } from '../../vault/vault';
import { loadConfig, type Config } from '../../runtime/config';
import type { Services } from '../../operations/services';
import { createLogger } from '../../runtime/logger';
import { freePort } from '../../runtime/ports';
import { ensurePostgres } from '../../runtime/postgres';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { DEFAULT_SQLITE_PRAGMAS, startDevServer } from '../../temporal/dev-server';
import { createWorker } from '../../temporal/worker';
import { dataConverterFor } from '../../temporal/payload-codec';
import { track } from './proc';

/**
 * The whole sync path, real pieces only, for the sync benches: a throwaway Postgres database
 * (DATABASE_URL, migrated), a file-backed Temporal dev server with the pragmas `npm start`
 * uses, the five emulators, a worker and the REST API in this process.
 */
export interface BenchTenant {
  tenantId: string;
  key: string;
  /** The emulator account behind each provider connection (credentials per mode). */
  accounts: Partial<Record<ProviderId, { account: string; credentials: Record<Mode, Record<string, string>> }>>;
}

export interface SyncStack {
  db: Knex;
  apiUrl: string;
  emulators: Record<ProviderId, RunningEmulator>;
  pgVersion: string;
  /** The worker's task queue and a Temporal client (the benches that ensure or trigger a Schedule). */
  taskQueue: string;
  client: Client;
  /** The worker's activity slots (WORKER_MAX_ACTIVITIES). */
  workerSlots: number;
  /** A tenant connected to `providers` (in `modes`) with `products` priced products; returns its secret key. */
  tenant(opts: {
    name: string;
    providers: readonly ProviderId[];
    modes: readonly Mode[];
    products: number;
    locales?: [string, string][];
  }): Promise<BenchTenant>;
  control(p: ProviderId, method: string, route: string, body?: unknown): Promise<any>;
  close(): Promise<void>;
}

export async function startSyncStack(log: (m: string) => void): Promise<SyncStack> {
  if (!process.env.DATABASE_URL) throw new Error('set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres)');
  const pg = await ensurePostgres({ databaseUrl: process.env.DATABASE_URL, dataDir: '' });
  const name = `billing_bench_sync_${Date.now().toString(36)}_${crypto.randomBytes(2).toString('hex')}`;
  const admin = createKnex(pg.url, { max: 1 });
  await admin.raw(`create database "${name}"`);
  const db = createKnex(withDatabase(pg.url, name), { max: 20 });
  await migrateLatest(db);
  const pgVersion = String((await db.raw('show server_version')).rows[0].server_version);
  log(`database ${name} (Postgres ${pgVersion})`);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sync-'));
  const temporal = await startDevServer({
    port: await freePort(),
    uiPort: null,
    dbFile: path.join(dir, 'temporal.db'),
    sqlitePragmas: DEFAULT_SQLITE_PRAGMAS,
  });
  track(temporal.process); // an interrupted bench leaves no dev server behind
  log(`temporal dev server ${temporal.address}`);

  const emulators = await startAllEmulators(
    { emulatorPorts: {} as never, dataDir: '' },
    { persistent: false, anyPort: true },
  );
  const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<
    ProviderId,
    string
  >;

  Runtime.install({ logger: new DefaultLogger('WARN') });
  const taskQueue = `bench-sync-${crypto.randomBytes(3).toString('hex')}`;
  const masterKey = generateMasterKey();
  // Production settings, with what production requires (runtime/config.ts) filled in.
  const prodEnv = {
    NODE_ENV: 'production',
    METRICS_PORT: '0',
    MASTER_KEY: masterKey,
    STORE_ANDROID_PUSH_SERVICE_ACCOUNT: 'bench-push@bench.iam.gserviceaccount.com',
  };
  const config: Config = { ...loadConfig(prodEnv), temporalAddress: temporal.address, taskQueue, providerBaseUrls };
  const vault = createVault(masterKey);
  const adapters = createAdapters(config);
  const { worker, connection: native } = await createWorker({
    address: temporal.address,
    namespace: 'default',
    taskQueue,
    deps: { db, config, vault, adapters },
  });
  const running = worker.run();
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: 'default', dataConverter: dataConverterFor(vault) });
  const services: Services = {
    db,
    config,
    vault,
    adapters,
    temporal: { connection, client },
  };
  const server = createHttpServer(createApiApp(services, createLogger('silent')).callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const apiUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;

  return {
    db,
    apiUrl,
    emulators,
    pgVersion,
    taskQueue,
    client,
    workerSlots: config.workerSlots.activities,
    async tenant(opts) {
      const t = await createTenant(db, { name: `${opts.name}-${crypto.randomBytes(3).toString('hex')}` });
      const accounts: BenchTenant['accounts'] = {};
      await withTenant(db, t.tenant_id, async (trx) => {
        for (const provider of opts.providers) {
          const acct = await createEmulatorAccount(emulators[provider].url);
          accounts[provider] = acct;
          const credentials = Object.fromEntries(opts.modes.map((m) => [m, acct.credentials[m]]));
          await createConnection(trx, vault, {
            provider,
            account_ref: acct.account,
            credentials,
            webhook_secret: acct.webhook_secret || null,
          });
        }
        const locales = opts.locales ?? [['US', 'USD']];
        const rows = Array.from({ length: opts.products }, (_, i) => ({
          tenant_id: t.tenant_id,
          sku: `bench_${String(i).padStart(4, '0')}`,
          name: `Bench product ${i}`,
          tier: 'monthly',
          android_store_product_id: `bench-${i}`,
          ios_store_product_id: `com.example.bench.p${i}`,
        }));
        for (let i = 0; i < rows.length; i += 500) {
          const ids = await trx('products')
            .insert(rows.slice(i, i + 500))
            .returning('id');
          await trx('prices').insert(
            ids.flatMap(({ id }: { id: string }, k: number) =>
              locales.map(([country, currency]) => ({
                tenant_id: t.tenant_id,
                product_id: id,
                country,
                currency,
                amount_minor: 499 + i + k,
              })),
            ),
          );
        }
      });
      return { tenantId: t.tenant_id, key: t.secret_key, accounts };
    },
    async control(p, method, route, body) {
      const res = await fetch(`${emulators[p].url}/__control${route}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = await res.json();
      if (!res.ok) throw new Error(`${p} ${method} ${route} → ${res.status} ${JSON.stringify(json)}`);
      return json;
    },
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      worker.shutdown();
      await running;
      await native.close();
      await connection.close();
      await Promise.all(Object.values(emulators).map((e) => e.close()));
      await temporal.stop();
      fs.rmSync(dir, { recursive: true, force: true });
      await db.destroy();
      await admin.raw(`drop database if exists "${name}" with (force)`).catch(() => {});
      await admin.destroy();
      await pg.stop();
    },
  };
}

/** GET/POST the management API with a tenant key. */
export async function api(
  apiUrl: string,
  route: string,
  key: string,
  init: RequestInit = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${apiUrl}${route}`, {
    ...init,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      ...(init.headers as Record<string, string>),
    },
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
