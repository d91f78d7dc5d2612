import { outboundTaskQueue } from '../domain/outbound-queue';
import { startOutboundDispatcher } from './outbound-dispatcher';
import { createWorker, type WorkerOptions } from './worker';

/**
 * The outbound worker: the deployment's worker bootstrap on the outbound queue
 * (domain/outbound-queue.ts), where only the delivery workflows and their drain run, and the
 * outbound outbox's dispatcher, which takes the rows of the deployment's queue (`taskQueue`,
 * as endpoints store it) and wakes their workflows there. Deliveries start with the worker
 * that runs them: the outbox drains from boot, and stops with it.
 */
export async function createOutboundWorker(opts: WorkerOptions): Promise<Awaited<ReturnType<typeof createWorker>>> {
  // Its slots bound the drains this process runs at once (OUTBOUND_WEBHOOK_MAX_DRAINS); one tenant takes at most
  // MAX_ACTIVE_DRAINS_PER_TENANT.
  const made = await createWorker({
    ...opts,
    taskQueue: outboundTaskQueue(opts.taskQueue),
    maxConcurrentActivityTaskExecutions: opts.deps.config.outboundWebhooks.maxDrains,
  });
  const { worker } = made;
  startOutboundDispatcher({
    db: opts.deps.db,
    config: opts.deps.config,
    vault: opts.deps.vault,
    address: opts.address,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    isRunning: () => !['STOPPING', 'DRAINING', 'DRAINED', 'STOPPED', 'FAILED'].includes(worker.getState()),
  });
  return made;
}
