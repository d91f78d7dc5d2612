import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../runtime/config';
import { resolveMasterKey } from '../runtime/master-key';
import { createVault } from '../providers/vault';
import { dataConverterFor } from '../temporal/payload-codec';
import { createAdapters } from '../providers';
import { openDatabase } from '../runtime/database';
import { logger } from '../runtime/logger';
import { createApiApp, createDashboardApp, createToolsApp } from './apps';
import { createHttpServer } from './http-server';
import type { Services } from './services';
import { startDispatcher, stopDispatcher } from './webhooks/dispatcher';

// The api process: the three stateless listeners (API, dashboard host, tool server).
const config = loadConfig();
const { db } = await openDatabase(config, { pool: { max: 20 } });
const vault = createVault(resolveMasterKey(config));
let temporal: Services['temporal'] = null;
if (config.temporalAddress) {
  const connection = Connection.lazy({ address: config.temporalAddress });
  // The worker's codec: what this client starts and signals is encrypted, what it reads decrypted.
  temporal = { connection, client: new Client({ connection, namespace: config.temporalNamespace, dataConverter: dataConverterFor(vault) }) };
}
// Webhook verification needs the signing secrets (decrypted only there) and the adapters' verifiers.
const services: Services = { db, config, temporal, vault, adapters: createAdapters(config) };

const listeners: [string, number, http.RequestListener][] = [
  ['api', config.apiPort, createApiApp(services, logger).callback()],
  ['dashboard', config.dashboardPort, createDashboardApp(services, logger).callback()],
  ['tools', config.toolsPort, createToolsApp(services, logger).callback()],
];
const servers = await Promise.all(
  listeners.map(
    ([name, port, handler]) =>
      new Promise<http.Server>((resolve, reject) => {
        // Timeouts and the connection cap on every listener (api/http-server.ts, HTTP_* variables).
        const s = createHttpServer(handler, config.httpLimits);
        s.once('error', reject);
        s.listen(port, process.env.BIND_HOST || '127.0.0.1', () => {
          logger.info({ listener: name, port }, 'listening');
          resolve(s);
        });
      }),
  ),
);
// Rows a crash or an outage left in the webhook outbox drain now, not on the next webhook.
startDispatcher(services);
logger.info({ task_queue: config.taskQueue }, 'webhook outbox dispatcher started');
const shutdown = async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  await stopDispatcher(services);
  await db.destroy();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
