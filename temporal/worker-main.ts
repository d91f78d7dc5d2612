import { loadConfig } from '../runtime/config';
import { yieldCpu } from '../runtime/process-priority';

// The worker process: the deployment's task queue (`billing`), the inbound path — provider
// webhooks, lifecycles, store purchases, syncs. Outbound deliveries have a process of their own
// (outbound-worker-main.ts).
//
// On a shared host it yields the CPU to the api (runtime/process-priority.ts): the buyer is premium
// from the webhook's own request, and the authoritative write catches up once the api is idle. Set
// first, before the modules below load and start their threads (`ENGINE_NICE`, runtime/config.ts).
yieldCpu(loadConfig().engineNice);

const { createWorker } = await import('./worker');
const { runWorkerProcess } = await import('./worker-process');
await runWorkerProcess('worker', createWorker);
