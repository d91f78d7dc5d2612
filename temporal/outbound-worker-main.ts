import os from 'node:os';

// The outbound worker process (`npm run worker:outbound`): outbound webhook deliveries on their
// own task queue (domain/outbound-queue.ts) and the outbound outbox's dispatcher, apart from the
// inbound worker so posting and signing them never delays a payment becoming premium.
//
// On a shared host it also yields the CPU to the inbound path: a lower scheduling priority
// (nice 10), which delays deliveries only while something more urgent is runnable. Set first,
// before the modules below load: on Linux the nice value is per thread and threads inherit it,
// so the Temporal core's and the workflow threads, made later, run at it too. Never raised
// (started nicer already, it stays so): raising it would need privileges.
os.setPriority(Math.max(os.getPriority(), 10));

const { createOutboundWorker } = await import('./outbound-worker');
const { runWorkerProcess } = await import('./worker-process');
await runWorkerProcess('outbound worker', createOutboundWorker);
