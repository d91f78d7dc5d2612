import { createWorker } from './worker';
import { runWorkerProcess } from './worker-process';

// The worker process: the deployment's task queue (`billing`), the inbound path — provider
// webhooks, lifecycles, store purchases, syncs. Outbound deliveries have a process of their own
// (outbound-worker-main.ts).
await runWorkerProcess('worker', createWorker);
