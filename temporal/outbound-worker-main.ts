import { PRIORITY, yieldCpu } from '../runtime/process-priority';

// The outbound worker process (`npm run worker:outbound`): outbound webhook deliveries on their
// own task queue (domain/outbound-queue.ts) and the outbound outbox's dispatcher, apart from the
// inbound worker so posting and signing them never delays a payment becoming premium.
//
// On a shared host it also yields the CPU to the api and the inbound worker (runtime/process-priority.ts),
// which delays deliveries only while something more urgent is runnable. Set first, before the
// modules below load and start their threads.
yieldCpu(PRIORITY.outbound);

const { createOutboundWorker } = await import('./outbound-worker');
const { runWorkerProcess } = await import('./worker-process');
await runWorkerProcess('outbound worker', createOutboundWorker);
