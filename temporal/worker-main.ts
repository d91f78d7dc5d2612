import { loadConfig } from '../runtime/config';
import { openDatabase } from '../runtime/database';
import { logger } from '../runtime/logger';
import { createWorker } from './worker';
import { resolveMasterKey } from '../runtime/master-key';
import { createVault } from '../providers/vault';
import { createAdapters } from '../providers';
import { ensureSearchAttributes } from './client';

// The worker process: task queue `billing`, every workflow and activity.
const config = loadConfig();
if (!config.temporalAddress) throw new Error('TEMPORAL_ADDRESS is required for the worker (npm start sets it)');
const vault = createVault(resolveMasterKey(config)); // fails fast, naming MASTER_KEY, in production without it
const { db, close } = await openDatabase(config, { pool: { max: 10 } });
// Idempotent: workflows are started with these attributes, so the cluster must know them.
await ensureSearchAttributes(config.temporalAddress, config.temporalNamespace);
const { worker, connection } = await createWorker({
  address: config.temporalAddress,
  namespace: config.temporalNamespace,
  taskQueue: config.taskQueue,
  deps: { db, config, vault, adapters: createAdapters(config) },
});
logger.info({ task_queue: config.taskQueue }, 'worker started');
await worker.run();
await connection.close();
await close();
