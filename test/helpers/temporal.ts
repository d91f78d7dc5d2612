import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig, type Config } from '../../runtime/config';
import { createVault, generateMasterKey } from '../../vault/vault';
import { createAdapters } from '../../providers';
import { createWorker } from '../../temporal/worker';
import { createOutboundWorker } from '../../temporal/outbound-worker';
import { dataConverterFor, payloadCodecFor } from '../../temporal/payload-codec';
import { appDb } from './db';
import { provided, runMasterKeyIfAny } from './provided';

/**
 * A real worker on the run's Temporal server with a task queue of its own, so test files in
 * parallel never pick up each other's tasks. `outbound: true` starts the outbound worker beside
 * it (its own queue and the outbox dispatcher, as `npm run worker:outbound`): what a test that
 * expects deliveries runs; `startOutbound()` starts it later.
 */
let runtimeInstalled = false;

export async function startTestWorker(
  opts: { config?: Partial<Config>; masterKey?: string; logger?: DefaultLogger; db?: Knex; outbound?: boolean } = {},
) {
  if (!runtimeInstalled) {
    // Keep worker chatter out of test output; warnings and errors still show.
    Runtime.install({
      logger: opts.logger ?? new DefaultLogger(process.env.TEMPORAL_LOG_LEVEL === 'INFO' ? 'INFO' : 'WARN'),
    });
    runtimeInstalled = true;
  }
  // A queue of its own unless the caller names one (a restarted worker picking up where one stopped).
  const taskQueue = opts.config?.taskQueue ?? `${provided('taskQueuePrefix')}-${crypto.randomBytes(3).toString('hex')}`;
  // A file that starts (and pauses) a Temporal server of its own names it; every other uses the run's.
  const address = opts.config?.temporalAddress ?? provided('temporalAddress');
  const masterKey = opts.masterKey ?? opts.config?.masterKey ?? runMasterKeyIfAny() ?? generateMasterKey();
  // The config carries the worker's key, so an API started with it (startApi({ config })) gets
  // the same payload codec and can read what this worker writes.
  const config: Config = {
    ...loadConfig({ NODE_ENV: 'test' }),
    temporalAddress: address,
    taskQueue,
    ...opts.config,
    masterKey,
  };
  const vault = createVault(masterKey);
  const options = {
    address,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: provided('workflowBundlePath'),
    deps: { db: opts.db ?? appDb(), config, vault, adapters: createAdapters(config) },
  };
  const stops: (() => Promise<void>)[] = [];
  const run = async (create: typeof createWorker) => {
    const { worker, connection: nativeConnection } = await create(options);
    const running = worker.run();
    stops.push(async () => {
      worker.shutdown();
      await running;
      await nativeConnection.close();
    });
  };
  await run(createWorker);
  let outbound: Promise<void> | undefined;
  const startOutbound = () => (outbound ??= run(createOutboundWorker));
  if (opts.outbound) await startOutbound();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: 'default', dataConverter: dataConverterFor(vault) });
  return {
    client,
    /** Decodes what this worker's payloads look like in a fetched history. */
    codec: payloadCodecFor(vault),
    taskQueue,
    config,
    vault,
    startOutbound,
    async stop() {
      await outbound;
      await Promise.all(stops.map((s) => s()));
      await connection.close();
    },
  };
}
