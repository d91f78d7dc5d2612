/**
 * The task queue outbound deliveries run on, derived from the deployment's task queue
 * (TEMPORAL_TASK_QUEUE, `billing`): a queue of their own, served by the outbound worker process
 * alone (temporal/outbound-worker-main.ts), so posting and signing never take a turn on the
 * inbound worker's event loop. Endpoints and outbox rows keep the deployment's queue
 * (`task_queue`, which dispatcher takes them); only the workflow and its activity run here.
 */
export const outboundTaskQueue = (taskQueue: string) => `${taskQueue}-outbound`;
